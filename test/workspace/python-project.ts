/**
 * A Python project with a src layout that pip installs without the network: its build backend
 * lives in the repository (`backend-path`) and requires nothing, and its editable wheel is one
 * `.pth` line pointing at `src/`, as setuptools' would. The module's answer is a parameter, so a
 * test can commit a broken one and keep a good copy elsewhere.
 */
import { exec } from "../../src/exec/index.js";
import type { FileSpec } from "../support/tmp.js";

const BACKEND = `"""A build backend with no requirements (offline tests)."""
import base64, hashlib, os, zipfile

NAME, VERSION = "mypkg", "0.1.0"


def _wheel(directory, files):
    dist = f"{NAME}-{VERSION}.dist-info"
    files = dict(files)
    files[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n"
    files[f"{dist}/WHEEL"] = "Wheel-Version: 1.0\\nGenerator: tinyback\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    record = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\\n".join(record) + "\\n"
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_editable = get_requires_for_build_wheel


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # The install's environment, for tests that check the shared caches reached it.
    with open("pip-cache-seen.txt", "w") as seen:
        seen.write(os.environ.get("PIP_CACHE_DIR", "-") + "\\n")
    return _wheel(wheel_directory, {f"{NAME}.pth": os.path.abspath("src") + "\\n"})


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {}
    for root, _, names in os.walk("src"):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path) as source:
                    files[os.path.relpath(path, "src")] = source.read()
    return _wheel(wheel_directory, files)
`;

/** The module under test, answering `answer`. */
export function moduleAnswering(answer: number): string {
  return `def answer():\n    return ${answer}\n`;
}

/** The files of the project: `src/mypkg` answering `answer`, a unittest expecting 42. */
export function pythonProject(answer: number): Record<string, FileSpec> {
  return {
    "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "tinyback"\nbackend-path = ["_build"]\n\n[project]\nname = "mypkg"\nversion = "0.1.0"\n',
    "_build/tinyback.py": BACKEND,
    "src/mypkg/__init__.py": moduleAnswering(answer),
    "tests/__init__.py": "",
    "tests/test_answer.py":
      "import unittest\n\nimport mypkg\n\n\nclass AnswerTest(unittest.TestCase):\n    def test_answer(self):\n        self.assertEqual(mypkg.answer(), 42)\n",
    ".gitignore": ".venv/\n__pycache__/\n*.egg-info/\npip-cache-seen.txt\n",
  };
}

/** The suite of {@link pythonProject}. */
export const PYTHON_SUITE = "python3 -m unittest discover -s tests -t .";

/**
 * Fails the test (never skips) when this machine cannot make virtual environments: the Python
 * rungs need `python3 -m venv` with its bundled pip.
 */
export async function requireVenv(): Promise<void> {
  const result = await exec(["/usr/bin/python3", "-c", "import venv, ensurepip"], { cwd: "/", timeoutMs: 30_000 });
  if (result.exitCode !== 0) throw new Error("the Python provisioning tests need python3 with venv and ensurepip: apt-get install -y python3-venv");
}
