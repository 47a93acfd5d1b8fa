"""Load an nftables ruleset into a namespace through libnftables (what `nft -f` itself calls),
without forking `ip netns exec ... nft`. Falls back to the nft binary when the library is absent."""

from __future__ import annotations

import ctypes
import ctypes.util

from linerate.errors import LabError
from linerate.exec import NetnsExecutor
from linerate.lab import netns

NFT_CTX_OUTPUT_DEFAULT = 0


def _load_library():
    name = ctypes.util.find_library("nftables") or "libnftables.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.nft_ctx_new.restype = ctypes.c_void_p
    lib.nft_ctx_new.argtypes = [ctypes.c_uint32]
    lib.nft_ctx_free.argtypes = [ctypes.c_void_p]
    lib.nft_ctx_buffer_error.argtypes = [ctypes.c_void_p]
    lib.nft_ctx_buffer_output.argtypes = [ctypes.c_void_p]
    lib.nft_ctx_get_error_buffer.restype = ctypes.c_char_p
    lib.nft_ctx_get_error_buffer.argtypes = [ctypes.c_void_p]
    lib.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return lib


_lib = _load_library()


def _load_here(ruleset: str) -> None:
    ctx = _lib.nft_ctx_new(NFT_CTX_OUTPUT_DEFAULT)
    try:
        _lib.nft_ctx_buffer_output(ctx)
        _lib.nft_ctx_buffer_error(ctx)
        if _lib.nft_run_cmd_from_buffer(ctx, ruleset.encode()) != 0:
            error = (_lib.nft_ctx_get_error_buffer(ctx) or b"").decode(errors="replace").strip()
            raise LabError(f"nftables refused the ruleset: {error or 'no message'}")
    finally:
        _lib.nft_ctx_free(ctx)


def load_ruleset(ns: str, ruleset: str) -> None:
    if _lib is None:
        NetnsExecutor(ns).run(["nft", "-f", "-"], stdin=ruleset, timeout_s=60)
    else:
        netns.run_in(ns, lambda: _load_here(ruleset))
