/**
 * Where a Python suite imports the package under test from. A clean clone proves the commit only
 * if the suite imports the clone's own source; an interpreter with an installed copy in its
 * site-packages (a pyenv Python, a `pip install` long ago), or a linked `.venv` whose editable
 * install points at the user's working tree, makes a broken module pass. The check cannot
 * prevent that in general, so it asks the suite's interpreter where each top-level package of
 * the project resolves and warns about every one found outside the clone.
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
import { basename, isAbsolute, join, resolve } from "node:path";
import { isInside } from "../../sandbox/index.js";
import type { BuiltCleanClone } from "./build.js";
import type { CleanCloneOptions } from "./options.js";
import type { CleanCloneResult } from "./record.js";
import { cloneStep, suiteEnvSet } from "./run-suite.js";
import { launchInClone } from "./suite.js";

const MANIFESTS = ["pyproject.toml", "setup.py", "setup.cfg"];
/** Folders at a project's root that hold no package under test. */
const NOT_PACKAGES = new Set(["test", "tests", "testing", "docs", "doc", "examples", "build", "dist", "scripts", "benchmarks", "site-packages"]);
/** At most this many packages are asked about: a project has one or two. */
const MAX_PACKAGES = 8;
const PACKAGE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Prints one line per name: the file the name imports from, or `-` when it is not found. */
const PROBE =
  "import importlib.util, sys\nfor name in sys.argv[1:]:\n    try:\n        spec = importlib.util.find_spec(name)\n    except Exception:\n        spec = None\n    print((spec.origin or '-') if spec is not None else '-')\n";

/** The top-level packages of a Python project in `root` (its `src/` layout first), or none for a project that is not Python. */
export function pythonPackages(root: string): string[] {
  if (!MANIFESTS.some((name) => isFile(join(root, name)))) return [];
  for (const base of [join(root, "src"), root]) {
    const found = packagesIn(base);
    if (found.length > 0) return found.slice(0, MAX_PACKAGES);
  }
  return [];
}

function packagesIn(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return names.filter((name) => PACKAGE_NAME.test(name) && !NOT_PACKAGES.has(name) && isFile(join(dir, name, "__init__.py")));
}

/**
 * The warnings about packages under test that the suite would import from outside the clone.
 * The probe runs in the sandbox as the suite does (same PATH, same folder, the interpreter the
 * command invokes when it is a Python, else `python3`); a probe that cannot run warns about nothing.
 */
export async function importWarnings(
  options: CleanCloneOptions,
  clone: BuiltCleanClone,
  interpreter: string | undefined,
  result: Partial<CleanCloneResult>,
): Promise<string[]> {
  const packages = pythonPackages(clone.cloneDir);
  if (packages.length === 0) return [];
  const named = result.interpreter;
  const python =
    named !== undefined && /^(python|pypy)[0-9.]*$/.test(basename(named)) ? (isAbsolute(named) ? named : resolve(clone.workDir, named)) : "python3";
  // The command's own leading assignments (`PYTHONPATH=… python -m pytest`) apply to the probe too.
  const probe = await launchInClone(
    ["/bin/sh", "-c", `${leadingAssignments(options.command)}exec "$@"`, "sh", python, "-c", PROBE, ...packages],
    {
      cwd: clone.workDir,
      // Stryker disable next-line ArrayDeclaration: a name that is no variable name allows nothing
      env: { allow: options.env?.allow ?? [], set: suiteEnvSet(options, interpreter, clone.cloneDir) },
      timeoutMs: 30_000,
      tailLines: MAX_PACKAGES + 2,
      tailBytes: 16 * 1024,
    },
    cloneStep(options, clone, interpreter),
  );
  if (probe.exitCode !== 0 || probe.timedOut) return [];
  const origins = probe.tail.trim().split("\n");
  const warnings: string[] = [];
  packages.forEach((name, index) => {
    const origin = origins[index]?.trim();
    if (origin === undefined || origin === "-" || !isAbsolute(origin)) return;
    if (isInside(realOf(origin), realOf(clone.cloneDir))) return;
    warnings.push(
      `the suite imports the package under test '${name}' from ${origin}, outside the clone: it tests that copy, not this commit's source ` +
        "(install the project into a virtual environment of the clone: clean_clone.provision, or --provision)",
    );
  });
  return warnings;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=\S*$/;

/** `A=1 B=2 ` for a command that starts `A=1 B=2 program …`, else nothing. */
export function leadingAssignments(command: string): string {
  const words = command.trim().split(/\s+/);
  const assignments: string[] = [];
  for (const word of words) {
    if (!ASSIGNMENT.test(word)) break;
    assignments.push(word);
  }
  return assignments.map((word) => `${word} `).join("");
}

function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
