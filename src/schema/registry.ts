import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { FailureClass } from "../failure/index.js";

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The repository's `schemas/` folder. */
export const SCHEMAS_DIR = fileURLToPath(new URL("../../schemas/", import.meta.url));

/** One offending value: where it is (as a JSON path) and what was expected. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** A document that failed its schema; names the file (or source) and every offending path. */
export class SchemaValidationError extends Error {
  readonly failureClass = "schema-invalid" satisfies FailureClass;
  constructor(
    readonly source: string,
    readonly schema: string,
    readonly issues: readonly SchemaIssue[],
  ) {
    super(`${source}: ${issues.map((issue) => `${issue.path} ${issue.message}`).join("; ")}`);
    this.name = "SchemaValidationError";
  }
}

/** Converts a JSON pointer (`/stages/2/seat`) into a JSON path (`$.stages[2].seat`). */
export function pointerToPath(pointer: string): string {
  if (pointer === "") return "$";
  return (
    "$" +
    pointer
      .slice(1)
      .split("/")
      .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"))
      .map((key) => (/^\d+$/.test(key) ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`))
      .join("")
  );
}

function describe(error: ErrorObject): SchemaIssue {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties") {
    const key = String(params.additionalProperty);
    return { path: pointerToPath(`${error.instancePath}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`), message: "is not an allowed key" };
  }
  if (error.keyword === "required") {
    return { path: pointerToPath(error.instancePath), message: `must have required key '${String(params.missingProperty)}'` };
  }
  if (error.keyword === "enum") {
    const allowed = (params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(", ");
    return { path: pointerToPath(error.instancePath), message: `must be one of ${allowed}` };
  }
  return { path: pointerToPath(error.instancePath), message: error.message ?? error.keyword };
}

/**
 * Every schema in `schemas/`, each compiled once, on first use (a command that validates one
 * workflow does not pay for compiling the journal's schema). A schema is named by its file
 * name without `.schema.json` (for example `clean-clone-result`).
 */
export class SchemaRegistry {
  private readonly ajv: Ajv2020;
  private readonly files = new Map<string, string>();
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(dir: string = SCHEMAS_DIR) {
    this.ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    addFormats(this.ajv);
    const files = readdirSync(dir)
      .filter((file) => file.endsWith(".schema.json"))
      .sort();
    for (const file of files) {
      this.ajv.addSchema(JSON.parse(readFileSync(join(dir, file), "utf8")) as object, file);
      this.files.set(file.replace(/\.schema\.json$/, ""), file);
    }
  }

  /** Names of the schemas known. */
  names(): string[] {
    return [...this.files.keys()];
  }

  /** Compiles the named schemas now (every one when none is named), so a hot path never pays for it. */
  precompile(...names: string[]): this {
    for (const name of names.length > 0 ? names : this.names()) this.validator(name);
    return this;
  }

  private validator(name: string): ValidateFunction {
    const known = this.validators.get(name);
    if (known) return known;
    const file = this.files.get(name);
    if (file === undefined) throw new Error(`unknown schema '${name}' (known: ${this.names().join(", ")})`);
    const validate = this.ajv.getSchema(file);
    if (!validate) throw new Error(`schema ${file} did not compile`);
    this.validators.set(name, validate);
    return validate;
  }

  /** The issues of `data` against schema `name`; empty when valid. */
  issues(name: string, data: unknown): SchemaIssue[] {
    const validate = this.validator(name);
    if (validate(data)) return [];
    return dedupe((validate.errors ?? []).map(describe));
  }

  /** Parses JSON `text` and returns it when it is valid against schema `name`; undefined otherwise (torn, empty, foreign). */
  parseValid<T>(name: string, text: string): T | undefined {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return undefined;
    }
    return this.issues(name, data).length === 0 ? (data as T) : undefined;
  }

  /** Returns `data` typed as T when valid; throws {@link SchemaValidationError} naming `source` otherwise. */
  validate<T>(name: string, data: unknown, source: string): T {
    const issues = this.issues(name, data);
    if (issues.length > 0) throw new SchemaValidationError(source, name, issues);
    return data as T;
  }
}

function dedupe(issues: SchemaIssue[]): SchemaIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path} ${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

let shared: SchemaRegistry | undefined;

/**
 * The registry over the repository's own `schemas/`, compiled on first use. It holds only
 * immutable compiled schemas, never configuration, so sharing it is safe.
 */
export function schemas(): SchemaRegistry {
  shared ??= new SchemaRegistry();
  return shared;
}
