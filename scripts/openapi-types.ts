// The producer's OpenAPI schemas as TypeScript types (scripts/schema-types.ts), written to
// test/support/openapi-types.ts, where test/openapi-client-types.test.ts holds the typed
// client's types to them: the typecheck fails when the two drift apart.
//   npm run openapi-types
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApi } from '../functions/producer/openapi.js';
import { repoRoot } from './repo-root.js';
import { TYPES_FILE, schemaTypes } from './schema-types.js';

writeFileSync(join(repoRoot(), TYPES_FILE), schemaTypes(openApi()));
console.log(`openapi-types: ${TYPES_FILE} written from functions/producer/openapi.ts`);
