"""The served data set and the two scales (quick for development, full for the record).

Everything lives under WORKDIR/files (what Apache serves at /files/) and is generated once;
a marker per item in WORKDIR/ready/ says it is complete, so an interrupted generation is
redone and a finished one reused.
"""
import os
import shutil
from dataclasses import dataclass, field

MiB = 1 << 20
GiB = 1 << 30


@dataclass
class Scale:
    name: str
    read_sizes: list            # bytes of each sequential-read file
    list_counts: list           # entries of each listing folder (zero-byte files)
    small_files: int            # a folder of small files (1-8 KiB each), listed with ls -l
    trees: list                 # find trees: (folders, items in all, folders included)
    parallel: tuple             # (files, bytes each) read in parallel
    fio_runtime: int            # seconds of random reads
    write_small_files: int = 2000  # files of 100 B-60 KB copied into the mount


SCALES = {
    "quick": Scale("quick", [64 * MiB], [1000], 1000, [(10, 1000)], (8, 16 * MiB), 3, 500),
    "full": Scale("full", [64 * MiB, GiB], [1000, 10000, 100000], 5000, [(100, 10000), (500, 50000)],
                  (8, 128 * MiB), 10),
}


def human(n):
    """64M, 1G: the suffix used in file and case names."""
    for unit, div in (("G", GiB), ("M", MiB), ("K", 1024)):
        if n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


class DataSet:
    """Paths of the generated items, relative to the served folder."""

    def __init__(self, workdir, scale):
        self.workdir = os.path.abspath(workdir)
        self.files = os.path.join(self.workdir, "files")
        self.ready = os.path.join(self.workdir, "ready")
        self.scale = scale

    # Relative paths, the same under the served folder and under every mount.
    def read_file(self, size):
        return f"read-{human(size)}.bin"

    def list_dir(self, count):
        return f"list-{count}"

    def small_dir(self):
        return f"small-{self.scale.small_files}"

    def tree_dir(self, items):
        return f"tree-{items}"

    def parallel_files(self):
        n, size = self.scale.parallel
        return [f"par-{human(size)}/p{i}.bin" for i in range(n)]

    def ensure(self, log=print):
        """Generates whatever is missing for this scale."""
        os.makedirs(self.files, exist_ok=True)
        os.makedirs(self.ready, exist_ok=True)
        os.chmod(self.workdir, 0o755)
        os.chmod(self.files, 0o755)
        s = self.scale
        for size in s.read_sizes:
            self._once(self.read_file(size), lambda p, size=size: _random_file(p, size), log)
        for count in s.list_counts:
            self._once(self.list_dir(count), lambda p, c=count: _empty_files(p, c), log)
        self._once(self.small_dir(), lambda p: _small_files(p, s.small_files), log)
        for folders, items in s.trees:
            self._once(self.tree_dir(items), lambda p, f=folders, i=items: _tree(p, f, i), log)
        n, size = s.parallel
        self._once(os.path.dirname(self.parallel_files()[0]), lambda p: _parallel(p, n, size), log)

    def _once(self, rel, make, log):
        marker = os.path.join(self.ready, rel.replace("/", "_"))
        if os.path.exists(marker):
            return
        path = os.path.join(self.files, rel)
        log(f"generating {rel} ...")
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.unlink(path)
        make(path)
        open(marker, "w").close()


def _random_file(path, size):
    chunk = 4 * MiB
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(chunk, left)
            f.write(os.urandom(n))
            left -= n
    os.chmod(path, 0o644)


def _empty_files(path, count):
    os.makedirs(path)
    for i in range(count):
        open(os.path.join(path, f"f{i:07d}" if count > 1000000 else f"f{i:06d}"), "w").close()


def _small_files(path, count):
    os.makedirs(path)
    for i in range(count):
        with open(os.path.join(path, f"s{i:05d}.dat"), "wb") as f:
            f.write(os.urandom(1024 + (i * 7919) % (7 * 1024)))  # 1-8 KiB, deterministic sizes


def _tree(path, folders, items):
    """`folders` folders, each holding an equal share of files: `items` entries in all."""
    os.makedirs(path)
    per = (items - folders) // folders
    for d in range(folders):
        sub = os.path.join(path, f"d{d:03d}")
        os.makedirs(sub)
        for i in range(per):
            with open(os.path.join(sub, f"f{i:04d}.txt"), "w") as f:
                f.write(f"{d}/{i}\n")


def _parallel(path, n, size):
    os.makedirs(path)
    for i in range(n):
        _random_file(os.path.join(path, f"p{i}.bin"), size)
