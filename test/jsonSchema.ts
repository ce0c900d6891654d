// A small JSON-schema check for the subset of draft 2020-12 the vendored schemas use (type, const,
// enum, oneOf, anyOf, items, properties, required, additionalProperties, format date-time): enough to
// hold an exported file to a published schema without a validator dependency.

export type JsonSchema = {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  format?: string;
};

const typeOk = (type: string, v: unknown): boolean => {
  switch (type) {
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    default:
      return typeof v === type;
  }
};

/**
 * Every place `value` breaks `schema`, as "path: problem" (empty = valid).
 * @example schemaErrors(schema, JSON.parse(text)) // []
 */
export function schemaErrors(schema: JsonSchema, value: unknown, path = '$'): string[] {
  const out: string[] = [];
  if (schema.type && !typeOk(schema.type, value)) return [`${path}: expected ${schema.type}`];
  if ('const' in schema && value !== schema.const)
    out.push(`${path}: expected ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value))
    out.push(`${path}: not one of ${JSON.stringify(schema.enum)}`);
  if (schema.format === 'date-time' && typeof value === 'string' && Number.isNaN(Date.parse(value)))
    out.push(`${path}: not a date-time`);
  if (schema.oneOf && schema.oneOf.filter((s) => !schemaErrors(s, value, path).length).length !== 1)
    out.push(`${path}: matches not exactly one of oneOf`);
  if (schema.anyOf && !schema.anyOf.some((s) => !schemaErrors(s, value, path).length))
    out.push(`${path}: matches none of anyOf`);
  if (Array.isArray(value) && schema.items)
    value.forEach((v, i) => out.push(...schemaErrors(schema.items!, v, `${path}[${i}]`)));
  if (typeOk('object', value)) {
    const obj = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in obj)) out.push(`${path}: missing ${key}`);
    for (const [key, v] of Object.entries(obj)) {
      const own = schema.properties?.[key];
      if (own) out.push(...schemaErrors(own, v, `${path}.${key}`));
      else if (schema.additionalProperties === false) out.push(`${path}: unexpected ${key}`);
      else if (typeof schema.additionalProperties === 'object')
        out.push(...schemaErrors(schema.additionalProperties, v, `${path}["${key}"]`));
    }
  }
  return out;
}
