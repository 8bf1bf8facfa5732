"""`swarm acp`: a whole team as one ACP agent (Agent Client Protocol, version 1) that an editor
(Zed, the JetBrains IDEs, Neovim) drives over stdio. Built on the headless lead's machinery
(swarm.lead) and the official SDK's agent side (`acp`)."""
