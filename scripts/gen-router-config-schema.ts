/**
 * Generates schemas/router-config.v3.schema.json (JSON Schema draft-07, for editors) from the TypeBox
 * schema in schemas/router-config.ts. Run: bun run scripts/gen-router-config-schema.ts
 */
import { fileURLToPath } from 'node:url'
import { RouterConfigSchema } from '../schemas/router-config.ts'

/** Where the generated file is committed. */
export const ROUTER_CONFIG_JSON_SCHEMA_PATH = fileURLToPath(new URL('../schemas/router-config.v3.schema.json', import.meta.url))

/** The generated file's exact text: TypeBox's JSON form (symbols dropped) under a draft-07 header. */
export function renderRouterConfigJsonSchema(): string {
  const body = JSON.parse(JSON.stringify(RouterConfigSchema)) as Record<string, unknown>
  const doc = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $comment: 'Generated from schemas/router-config.ts by scripts/gen-router-config-schema.ts; do not edit by hand.',
    ...body,
  }
  return `${JSON.stringify(doc, null, 2)}\n`
}

if (import.meta.main) {
  await Bun.write(ROUTER_CONFIG_JSON_SCHEMA_PATH, renderRouterConfigJsonSchema())
  console.log(`wrote ${ROUTER_CONFIG_JSON_SCHEMA_PATH}`)
}
