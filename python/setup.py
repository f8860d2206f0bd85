"""pip install --no-build-isolation .   (run in python/; Debian's setuptools, no package index)

Builds the `_embedscope` extension with the project's CMake (release, Ninja, ccache when
present) in ../build-python and installs it inside the `embedscope` package."""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(os.environ.get("EMBEDSCOPE_BUILD_DIR", ROOT / "build-python"))
        cfg = ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
               "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS=-O2 -g0",
               "-DES_BUILD_TESTS=OFF", "-DES_BUILD_BENCH=OFF", f"-DPYTHON_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):
            cfg += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        subprocess.check_call(cfg)
        jobs = os.environ.get("EMBEDSCOPE_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(build), "-j", jobs, "--target", "_embedscope"])
        built = sorted((build / "python").glob("_embedscope*.so"))
        if not built:
            raise RuntimeError(f"cmake did not produce {build}/python/_embedscope*.so")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], dest)


setup(
    name="embedscope",
    version="0.1.0",
    description="Nearest neighbours, analogies and exploration of token-embedding matrices",
    packages=["embedscope"],
    ext_modules=[Extension("embedscope._embedscope", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
)
