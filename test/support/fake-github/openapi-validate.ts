import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** The description the fake validates against: the fake plays GitHub Enterprise Server. */
export const OPENAPI_DESCRIPTION = "ghes-3.19.json";

type Schema = Record<string, unknown>;
interface Operation {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> } | { $ref: string };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> } | { $ref: string }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; requestBodies?: Record<string, Schema> };
}

let documentCache: OpenApiDocument | undefined;
const validators = new Map<string, { validate: ValidateFunction; required: boolean } | null>();
let ajvInstance: Ajv | undefined;

/** Loads GitHub's description once per process, on first use (an 11 MB parse, ~100 ms). */
function openApiDocument(): OpenApiDocument {
  if (!documentCache) {
    const require = createRequire(import.meta.url);
    const packageDir = dirname(require.resolve("@octokit/openapi"));
    documentCache = JSON.parse(readFileSync(join(packageDir, "generated", OPENAPI_DESCRIPTION), "utf8")) as OpenApiDocument;
  }
  return documentCache;
}

function ajv(): Ajv {
  // Non-strict: the description carries OpenAPI-only keywords (example, discriminator, x-*).
  ajvInstance ??= addFormats(new Ajv({ strict: false, allErrors: true, logger: false }));
  return ajvInstance;
}

function resolvePointer(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith("#/")) throw new Error(`fake-github: external $ref ${ref} is not supported`);
  let node: unknown = document;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    node = (node as Record<string, unknown> | undefined)?.[key];
  }
  if (node === undefined) throw new Error(`fake-github: $ref ${ref} does not resolve`);
  return node;
}

const SCHEMA_MAPS = ["properties", "patternProperties"];
const SCHEMA_ARRAYS = ["allOf", "anyOf", "oneOf"];
const SCHEMA_SINGLES = ["items", "additionalProperties", "not"];
const SCHEMA_PREFIX = "#/components/schemas/";

/**
 * Turns an OpenAPI 3.0 schema into JSON Schema Ajv understands. Component references become
 * `$defs` entries (collected in `defs`, which also breaks reference cycles). `nullable` becomes a
 * `null` type. `oneOf` becomes `anyOf`: GitHub's description has overlapping alternatives (a
 * label is a string or an object with a name) that GitHub's server accepts when any one fits.
 */
function convert(document: OpenApiDocument, node: unknown, defs: Record<string, Schema>): unknown {
  if (typeof node !== "object" || node === null || Array.isArray(node)) return node;
  const schema = node as Schema;
  if (typeof schema.$ref === "string") {
    const ref = schema.$ref;
    if (!ref.startsWith(SCHEMA_PREFIX)) return convert(document, resolvePointer(document, ref), defs);
    const name = ref.slice(SCHEMA_PREFIX.length);
    if (!(name in defs)) {
      defs[name] = {};
      defs[name] = convert(document, resolvePointer(document, ref), defs) as Schema;
    }
    return { $ref: `#/$defs/${name}` };
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "example" || key === "examples" || key === "nullable" || key === "discriminator") continue;
    const target = key === "oneOf" ? "anyOf" : key;
    if (SCHEMA_MAPS.includes(key) && value && typeof value === "object") {
      out[target] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, convert(document, child, defs)]));
    } else if (SCHEMA_ARRAYS.includes(key) && Array.isArray(value)) {
      out[target] = value.map((child) => convert(document, child, defs));
    } else if (SCHEMA_SINGLES.includes(key) && typeof value === "object" && value !== null) {
      out[target] = convert(document, value, defs);
    } else out[target] = value;
  }
  if (schema.nullable !== true) return out;
  if (typeof out.type === "string") {
    out.type = [out.type, "null"];
    if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
    return out;
  }
  return { anyOf: [out, { type: "null" }] };
}

/** True when the description has this operation (method in lower or upper case). */
export function hasOperation(method: string, template: string): boolean {
  return openApiDocument().paths[template]?.[method.toLowerCase()] !== undefined;
}

function operationOf(method: string, template: string): { document: OpenApiDocument; operation: Operation } {
  const document = openApiDocument();
  const operation = document.paths[template]?.[method.toLowerCase()];
  if (!operation) throw new Error(`fake-github: ${method.toUpperCase()} ${template} is not an operation of GitHub's OpenAPI description`);
  return { document, operation };
}

function compileSchema(document: OpenApiDocument, schema: Schema): ValidateFunction {
  const defs: Record<string, Schema> = {};
  const root = convert(document, schema, defs) as Schema;
  return ajv().compile({ ...root, $defs: defs });
}

/** The JSON schema of a request body or response, its `$ref`s to whole bodies resolved. */
function jsonSchemaOf(document: OpenApiDocument, part: { content?: Record<string, { schema?: Schema }> } | { $ref: string } | undefined): Schema | undefined {
  const resolved = part && "$ref" in part ? (resolvePointer(document, part.$ref) as { content?: Record<string, { schema?: Schema }> }) : part;
  return resolved?.content?.["application/json"]?.schema;
}

function validatorFor(method: string, template: string): { validate: ValidateFunction; required: boolean } | null {
  const key = `${method.toUpperCase()} ${template}`;
  const cached = validators.get(key);
  if (cached !== undefined) return cached;
  const { document, operation } = operationOf(method, template);
  const schema = jsonSchemaOf(document, operation.requestBody);
  const body = operation.requestBody && !("$ref" in operation.requestBody) ? operation.requestBody : undefined;
  const entry = schema ? { validate: compileSchema(document, schema), required: body?.required === true } : null;
  validators.set(key, entry);
  return entry;
}

/**
 * Checks a response the fake is about to send against the operation's response schema for that
 * status: the fake's own objects must look like GitHub's. Empty when it matches or the
 * description has no JSON schema for the status.
 */
export function responseBodyProblems(method: string, template: string, status: number, body: unknown): string[] {
  const key = `${method.toUpperCase()} ${template} → ${status}`;
  let entry = validators.get(key);
  if (entry === undefined) {
    const { document, operation } = operationOf(method, template);
    const schema = jsonSchemaOf(document, operation.responses?.[String(status)]);
    entry = schema ? { validate: compileSchema(document, schema), required: true } : null;
    validators.set(key, entry);
  }
  if (!entry || entry.validate(body)) return [];
  return (entry.validate.errors ?? []).map(describe);
}

function describe(error: ErrorObject): string {
  const where = error.instancePath === "" ? "the body" : `'${error.instancePath.slice(1).replace(/\//g, ".")}'`;
  const extra = error.keyword === "enum" ? ` (${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)})` : "";
  return `For ${where}, ${error.message ?? "the value is invalid"}${extra}.`;
}

/**
 * Loads GitHub's description and compiles the request validators of these operations now
 * (a benchmark, before its clock starts: otherwise its first stories pay for them, seconds of
 * CPU on the machine it measures). Returns how many operations take a JSON body.
 */
export function compileRequestValidators(operations: readonly { method: string; template: string }[]): number {
  return operations.filter((operation) => validatorFor(operation.method, operation.template) !== null).length;
}

/**
 * Checks a request body against the operation's schema in GitHub's description. Returns the
 * problems (empty when the body is valid or the operation takes no JSON body). Compiles the
 * operation's validator on first use only, so startup stays fast.
 */
export function requestBodyProblems(method: string, template: string, body: unknown): string[] {
  const entry = validatorFor(method, template);
  if (!entry) return [];
  if (body === undefined && !entry.required) return [];
  if (entry.validate(body === undefined ? {} : body)) return [];
  return (entry.validate.errors ?? []).map(describe);
}
