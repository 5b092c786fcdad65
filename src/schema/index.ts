export { SchemaRegistry, SchemaValidationError, schemas, pointerToPath, SCHEMAS_DIR, type SchemaIssue } from "./registry.js";
