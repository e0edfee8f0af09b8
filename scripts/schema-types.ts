// An OpenAPI document's components.schemas as TypeScript types: the JSON Schema the producer's
// document uses ($ref, const, enum, type, properties, required, items, oneOf), no more. An
// object's oneOf of `required` alone (exactly one of two fields) is left to the schema.
// scripts/openapi-types.ts writes its output; test/openapi.test.ts checks that it is current.
type Schema = { [k: string]: unknown };

const literal = (v: unknown) => (typeof v === 'string' ? `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` : JSON.stringify(v));
const PRIMITIVE: Record<string, string> = { string: 'string', integer: 'number', number: 'number', boolean: 'boolean', null: 'null' };

function typeOf(s: Schema): string {
  if (typeof s.$ref === 'string') return s.$ref.slice(s.$ref.lastIndexOf('/') + 1);
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) return s.enum.map(literal).join(' | ');
  const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (branches && !s.properties) return branches.map(typeOf).join(' | ');
  if (Array.isArray(s.type)) return s.type.map((t) => typeOf({ ...s, type: t })).join(' | ');
  if (s.type === 'array') return `Array<${typeOf(s.items as Schema)}>`;
  if (s.type === 'object' || s.properties) return `{ ${members(s).join('; ')} }`;
  if (typeof s.type === 'string' && PRIMITIVE[s.type]) return PRIMITIVE[s.type]!;
  throw new Error(`no TypeScript type for the schema ${JSON.stringify(s)}`);
}

function members(s: Schema): string[] {
  const required = (s.required ?? []) as string[];
  const out = Object.entries((s.properties ?? {}) as Record<string, Schema>).map(
    ([name, p]) => `${/^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name)}${required.includes(name) ? '' : '?'}: ${typeOf(p)}`,
  );
  if (s.additionalProperties !== false) out.push('[k: string]: unknown');
  return out;
}

/** Where `npm run openapi-types` writes the producer document's types. */
export const TYPES_FILE = 'test/support/openapi-types.ts';

const HEADER = `// Generated from the producer's OpenAPI document (functions/producer/openapi.ts) by
// \`npm run openapi-types\`: do not edit. test/openapi.test.ts fails when it is not current.
`;

/** The module's text: a type per schema, an interface for each object. */
export function schemaTypes(doc: object): string {
  const { schemas } = (doc as { components: { schemas: Record<string, Schema> } }).components;
  const out = [HEADER];
  for (const [name, s] of Object.entries(schemas)) {
    if (s.type === 'object' && s.properties)
      out.push(
        `export interface ${name} {\n${members(s)
          .map((m) => `  ${m};\n`)
          .join('')}}\n`,
      );
    else {
      const type = typeOf(s);
      // a union too long for one line, as the formatter lays it out
      const laid =
        type.length > 140 && type.includes(' | ')
          ? `\n${type
              .split(' | ')
              .map((t) => `  | ${t}`)
              .join('\n')}`
          : ` ${type}`;
      out.push(`export type ${name} =${laid};\n`);
    }
  }
  return out.join('\n');
}
