"""Text for a person: a teammate's view, readable lines, tables, terminal safety, real input."""
