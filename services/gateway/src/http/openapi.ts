import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiQuery, type OpenAPIObject } from '@nestjs/swagger';
import { openApiSchemaOf, type Schema } from '@bns/contracts';

/**
 * OpenAPI from the contracts' zod schemas: the documentation is generated from the same schema the
 * pipe validates with, so the two cannot disagree. A schema given a name is listed once under
 * `components.schemas` and referenced; `addSchemaComponents` puts them into the document.
 */
export type OpenApiSchema = Parameters<typeof ApiBody>[0] extends infer O
  ? O extends { schema?: infer S }
    ? S
    : never
  : never;

const components = new Map<string, OpenApiSchema>();

/** The schema inline, or — named — a reference to its entry in `components.schemas`. */
export function openApi(schema: Schema, name?: string): OpenApiSchema {
  const json = openApiSchemaOf(schema) as OpenApiSchema;
  if (name === undefined) return json;
  components.set(name, json);
  return { $ref: `#/components/schemas/${name}` } as OpenApiSchema;
}

/** Lists a schema under `components.schemas` without a route referring to it (e.g. the entity itself). */
export function registerSchema(name: string, schema: Schema): void {
  openApi(schema, name);
}

export function addSchemaComponents(document: OpenAPIObject): OpenAPIObject {
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...Object.fromEntries(components) },
  };
  return document;
}

export const ApiSchemaBody = (schema: Schema, name?: string) => ApiBody({ schema: openApi(schema, name) });
export const ApiSchemaOk = (schema: Schema, name?: string) => ApiOkResponse({ schema: openApi(schema, name) });
export const ApiSchemaCreated = (schema: Schema, name?: string) =>
  ApiCreatedResponse({ schema: openApi(schema, name) });

/** One `@ApiQuery` per property of an object schema. */
export function ApiSchemaQuery(schema: Schema): MethodDecorator & ClassDecorator {
  const json = openApiSchemaOf(schema) as {
    properties?: Record<string, OpenApiSchema & { description?: string }>;
    required?: string[];
  };
  return applyDecorators(
    ...Object.entries(json.properties ?? {}).map(([name, property]) =>
      ApiQuery({
        name,
        required: json.required?.includes(name) ?? false,
        schema: property,
        description: property.description,
      }),
    ),
  );
}
