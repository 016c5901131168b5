"""Reading a GGUF file's header, to tell a complete file from a truncated one cheaply.

A GGUF file is a header (magic, version, metadata, one description per tensor) followed
by the tensor data. Each tensor description gives the tensor's shape, element type and
offset into the data section, so the header alone says how long the whole file must be.
Comparing that with the file's size finds a truncated download or copy in a few
milliseconds, where hashing it would read every byte.

Only the parts of the format needed for that are read; metadata values are skipped, but
for the chat template (a server judge renders its prompts with it).
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32

# Metadata value types: fixed byte sizes of the scalar ones; 8 is a string, 9 an array.
_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY, _UINT32 = 8, 9, 4
_U32, _U64 = struct.Struct("<I"), struct.Struct("<Q")

# ggml tensor element types: (elements per block, bytes per block). Quantised types store
# blocks of 32 or 256 values; the sizes are those of ggml's type traits.
GGML_BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4),  # F32
    1: (1, 2),  # F16
    2: (32, 18),  # Q4_0
    3: (32, 20),  # Q4_1
    6: (32, 22),  # Q5_0
    7: (32, 24),  # Q5_1
    8: (32, 34),  # Q8_0
    9: (32, 36),  # Q8_1
    10: (256, 84),  # Q2_K
    11: (256, 110),  # Q3_K
    12: (256, 144),  # Q4_K
    13: (256, 176),  # Q5_K
    14: (256, 210),  # Q6_K
    15: (256, 292),  # Q8_K
    16: (256, 66),  # IQ2_XXS
    17: (256, 74),  # IQ2_XS
    18: (256, 98),  # IQ3_XXS
    19: (256, 50),  # IQ1_S
    20: (32, 18),  # IQ4_NL
    21: (256, 110),  # IQ3_S
    22: (256, 82),  # IQ2_S
    23: (256, 136),  # IQ4_XS
    24: (1, 1),  # I8
    25: (1, 2),  # I16
    26: (1, 4),  # I32
    27: (1, 8),  # I64
    28: (1, 8),  # F64
    29: (256, 56),  # IQ1_M
    30: (1, 2),  # BF16
    34: (256, 54),  # TQ1_0
    35: (256, 66),  # TQ2_0
    39: (32, 17),  # MXFP4
}

# Bounds that no real model reaches; a header beyond them is corrupt, not just large.
_MAX_COUNT = 1 << 24
_MAX_STRING = 1 << 28
_MAX_DIMS = 8


_ENDS_IN_HEADER = "is truncated: the file ends inside its header"


class GGUFHeaderError(ValueError):
    """The header cannot be read: the file is cut short inside it, or it is corrupt.

    The message is a predicate about the file ("is truncated: ..."), to follow its path.
    """


@dataclass(frozen=True)
class GGUFHeader:
    version: int
    tensor_count: int
    #: where the tensor data section starts (after the header, aligned)
    data_start: int
    #: bytes the file must hold: the end of the last tensor's data; None when a tensor
    #: has an element type this reader does not know (then only `data_start` is checked)
    required_size: int | None
    #: the Jinja chat template the file carries (tokenizer.chat_template), if any
    chat_template: str | None = None


class _Reader:
    """Little-endian reads from a mapped file, with a clear error when the file ends early."""

    def __init__(self, data: mmap.mmap | bytes):
        self.data = data
        self.position = 0

    def take(self, size: int) -> bytes:
        end = self.position + size
        if end > len(self.data):
            raise GGUFHeaderError(_ENDS_IN_HEADER)
        chunk = self.data[self.position : end]
        self.position = end
        return chunk

    def skip(self, size: int) -> None:
        if self.position + size > len(self.data):
            raise GGUFHeaderError(_ENDS_IN_HEADER)
        self.position += size

    def u32(self) -> int:
        if self.position + 4 > len(self.data):
            raise GGUFHeaderError(_ENDS_IN_HEADER)
        value = _U32.unpack_from(self.data, self.position)[0]
        self.position += 4
        return int(value)

    def u64(self) -> int:
        if self.position + 8 > len(self.data):
            raise GGUFHeaderError(_ENDS_IN_HEADER)
        value = _U64.unpack_from(self.data, self.position)[0]
        self.position += 8
        return int(value)

    def string(self) -> bytes:
        return self.take(self._string_length())

    def skip_string(self) -> None:
        self.skip(self._string_length())

    def skip_strings(self, count: int) -> None:
        """Skip `count` strings in a row (a tokenizer's vocabulary: 100,000s of them)."""
        data, position, size = self.data, self.position, len(self.data)
        for _ in range(count):
            if position + 8 > size:
                raise GGUFHeaderError(_ENDS_IN_HEADER)
            length = _U64.unpack_from(data, position)[0]
            if length > _MAX_STRING:
                raise GGUFHeaderError(f"has a corrupt header (a string of {length} bytes)")
            position += 8 + length
        if position > size:
            raise GGUFHeaderError(_ENDS_IN_HEADER)
        self.position = position

    def _string_length(self) -> int:
        length = self.u64()
        if length > _MAX_STRING:
            raise GGUFHeaderError(f"has a corrupt header (a string of {length} bytes)")
        return length


def _count(value: int, what: str) -> int:
    if value > _MAX_COUNT:
        raise GGUFHeaderError(f"has a corrupt header ({value} {what})")
    return value


def _skip_value(reader: _Reader, value_type: int) -> None:
    if value_type in _SCALAR_SIZES:
        reader.skip(_SCALAR_SIZES[value_type])
    elif value_type == _STRING:
        reader.skip_string()
    elif value_type == _ARRAY:
        item_type = reader.u32()
        count = _count(reader.u64(), "array items")
        if item_type in _SCALAR_SIZES:
            reader.skip(_SCALAR_SIZES[item_type] * count)
        elif item_type == _STRING:
            reader.skip_strings(count)
        else:
            for _ in range(count):
                _skip_value(reader, item_type)
    else:
        raise GGUFHeaderError(f"has a corrupt header (unknown metadata type {value_type})")


def read_header(path: Path) -> GGUFHeader:
    """Parse the header of the GGUF file at `path`.

    Raises GGUFHeaderError when the header is cut short or corrupt, OSError when unreadable.
    """
    with path.open("rb") as handle:
        if path.stat().st_size == 0:
            raise GGUFHeaderError("is empty")
        # mapped, not read: only the header's pages are ever touched
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _parse(_Reader(data))


def _parse(reader: _Reader) -> GGUFHeader:
    if reader.take(4) != GGUF_MAGIC:
        raise GGUFHeaderError("is not a GGUF file (bad magic number)")
    version = reader.u32()
    if version not in SUPPORTED_VERSIONS:
        raise GGUFHeaderError(f"has unsupported GGUF version {version}")
    tensor_count = _count(reader.u64(), "tensors")
    metadata_count = _count(reader.u64(), "metadata entries")
    alignment = DEFAULT_ALIGNMENT
    template: str | None = None
    for _ in range(metadata_count):
        key = reader.string()
        value_type = reader.u32()
        if key == b"general.alignment" and value_type == _UINT32:
            alignment = reader.u32()
            if alignment == 0 or alignment & (alignment - 1):
                raise GGUFHeaderError(f"has a corrupt header (alignment {alignment})")
        elif key == b"tokenizer.chat_template" and value_type == _STRING:
            template = reader.string().decode("utf-8", errors="replace")
        else:
            _skip_value(reader, value_type)
    data_end: int | None = 0
    for _ in range(tensor_count):
        reader.skip_string()  # the tensor's name
        n_dims = reader.u32()
        if n_dims > _MAX_DIMS:
            raise GGUFHeaderError(f"has a corrupt header (a tensor of {n_dims} dimensions)")
        elements = 1
        for _ in range(n_dims):
            elements *= reader.u64()
        element_type = reader.u32()
        offset = reader.u64()
        if data_end is None or element_type not in GGML_BLOCKS:
            data_end = None
            continue
        per_block, block_bytes = GGML_BLOCKS[element_type]
        size = -(-elements // per_block) * block_bytes
        data_end = max(data_end, offset + size)
    data_start = -(-reader.position // alignment) * alignment
    required = None if data_end is None else data_start + data_end
    return GGUFHeader(version, tensor_count, data_start, required, template)


def truncation_problem(path: Path) -> str | None:
    """Why the GGUF file at `path` is incomplete or unreadable, or None if it is whole."""
    try:
        header = read_header(path)
        size = path.stat().st_size
    except GGUFHeaderError as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if header.required_size is not None and size < header.required_size:
        return (
            f"is truncated: {size:,} bytes, its header describes {header.required_size:,} "
            "(an interrupted download or copy?)"
        )
    if size < header.data_start:
        return _ENDS_IN_HEADER
    return None
