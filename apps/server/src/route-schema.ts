// Fastify route schemas generated from the API's shapes in @kbench/schema (the one declaration of
// each): ajv validates requests against them, fast-json-stringify writes answers by them.
import { errorBodySchema, type JsonSchema, jsonSchemaOf } from '@kbench/schema';

type Shape = Parameters<typeof jsonSchemaOf>[0];

/** What a body, params or query must be: unknown fields are refused, each problem named by its path. */
export const requestSchema = (shape: Shape): JsonSchema => jsonSchemaOf(shape, 'request');

/** What an answer is written as: fields outside the shape are left out. */
export const responseSchema = (shape: Shape): JsonSchema => jsonSchemaOf(shape, 'response');

const errorBody = responseSchema(errorBodySchema);

/** The error answers every route may give. */
export const errorResponses = {
  400: errorBody,
  403: errorBody,
  404: errorBody,
  409: errorBody,
  500: errorBody,
};
