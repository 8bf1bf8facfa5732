"""The protocol's own stdin and stdout: kept aside before anything else runs, so that nothing
else in the process (a print, a hook's or a Bash command's inherited descriptors) can write into
the JSON-RPC stream or read from it. Descriptor 1 then points at stderr, descriptor 0 at
/dev/null."""

from __future__ import annotations

import asyncio
import os
import sys

STREAM_LIMIT = 2**22  # one JSON-RPC line may be long (a prompt with a file in it)


class ProtocolPipes:
    """Duplicates of the process's stdin and stdout for the protocol only (not inherited)."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self.read_fd = os.dup(0)
        self.write_fd = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)  # a stray print goes to the editor's log of stderr, not the protocol

    async def streams(self) -> tuple[asyncio.StreamWriter, asyncio.StreamReader]:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=STREAM_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                     os.fdopen(self.read_fd, "rb", buffering=0))
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(self.write_fd, "wb", buffering=0))
        return asyncio.StreamWriter(transport, protocol, None, loop), reader
