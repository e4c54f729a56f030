# SPDX-License-Identifier: Apache-2.0
"""Stand-in sub-kernel objects for the vendor's generator: it reads only the size of each
object's .text (llvm-objdump -h, for the preload count) and unpacks pre-split archives with
`ar x`. We write host ELF objects with a .text of the size wanted (the host assembler), and the
archive of them the op compiler would write when the sub-kernel JSON has a split_mode."""
import os
import subprocess
import tempfile

# .text sizes giving the preload counts of the vendor's ST sub-kernels (ceil(size / 2048)).
TEXT_SIZE = {"is_inf": 4000, "is_finite": 4000, "pows": 10000}


def elf_with_text(path, text_size):
    subprocess.run(["cc", "-c", "-x", "assembler", "-", "-o", path],
                   input=f".text\n.space {text_size}\n", text=True, check=True)


def sub_kernel_archive(path, members, text_size):
    """An ar archive at `path` holding one ELF of that .text size per member name."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for member in members:
            elf_with_text(os.path.join(tmp, member), text_size)
            files.append(os.path.join(tmp, member))
        if os.path.exists(path):
            os.unlink(path)
        subprocess.run(["ar", "rcs", path] + files, check=True)


def members_of(meta):
    """The object file names a sub-kernel JSON names (obj_files, obj_files_split<k>)."""
    names = []
    for core in meta.get("sub_operator_kernel_name", {}).values():
        if isinstance(core, dict):
            for key, value in core.items():
                if key.startswith("obj_files") and isinstance(value, str):
                    names.append(os.path.basename(value))
    return sorted(set(names)) or [meta.get("binFileName", "kernel") + ".o"]
