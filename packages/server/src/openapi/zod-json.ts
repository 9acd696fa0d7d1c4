import { z } from 'zod';
import type { JsonSchema } from './types.ts';

const TARGET = 'openapi-3.0';
export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Drops what an OpenAPI 3.0 Schema Object may not hold ($id, $schema) and zod's safe-integer noise. */
function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  if (!value || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '$id' || key === '$schema') continue;
    if (key === '$defs') throw new Error('unexpected $defs: register the shared schema by name');
    if (key === 'minimum' && item === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'maximum' && item === Number.MAX_SAFE_INTEGER) continue;
    out[key] = clean(item);
  }
  // OpenAPI 3.0.3: `nullable` does not widen an `enum`; null must be listed for validators to accept it.
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null))
    out.enum = [...out.enum, null];
  return out;
}

/**
 * Named component schemas from zod, with zod 4's own converter: nested schemas that have a name
 * become `$ref`s. `input` for what partners send (defaults optional), `output` for what they receive.
 */
export function componentSchemas(
  named: Map<string, z.ZodType>,
  io: 'input' | 'output',
): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of named) {
    if (registry.has(schema)) throw new Error(`schema ${id} is registered twice under different names`);
    registry.add(schema, { id });
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: TARGET,
    io,
    unrepresentable: 'throw',
    uri: (id) => schemaRef(id).$ref,
  });
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, clean(schema) as JsonSchema]));
}

type ObjectJson = { properties?: Record<string, JsonSchema>; required?: string[] };

/**
 * The properties of an object schema as parameters. The types are the parsed ones (a query `page` is an
 * integer, `isActive` a boolean, as a generated client sends them); whether one is required is
 * decided by what the route accepts (a parameter with a default is optional).
 */
export function objectProperties(
  schema: z.ZodType,
): { name: string; required: boolean; schema: JsonSchema }[] {
  const output = clean(
    z.toJSONSchema(schema, { target: TARGET, io: 'output', unrepresentable: 'throw' }),
  ) as ObjectJson;
  const input = z.toJSONSchema(schema, {
    target: TARGET,
    io: 'input',
    unrepresentable: 'throw',
  }) as ObjectJson;
  const required = new Set(input.required ?? []);
  return Object.entries(output.properties ?? {}).map(([name, property]) => ({
    name,
    required: required.has(name),
    schema: property,
  }));
}
