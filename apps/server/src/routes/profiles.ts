// Target profiles: list, create, delete. Answers never carry a secret (passwords, passphrases and
// PEM keys are masked), and a bad profile is a 400 naming each field.
import { ProfileExistsError } from '@kbench/engine/profiles';
import {
  deletedSchema,
  maskedProfileSchema,
  maskProfile,
  ProfileError,
  profileNameParamsSchema,
  profileSaveQuerySchema,
  type TargetProfile,
} from '@kbench/schema';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http-error.js';
import { errorResponses, requestSchema, responseSchema } from '../route-schema.js';

/** What the API shows of a profile: every field, secrets masked; generated from @kbench/schema. */
export const maskedProfile = responseSchema(maskedProfileSchema);

function badProfile(err: ProfileError): HttpError {
  return new HttpError(400, 'invalid profile', err.issues);
}

export async function profileRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/api/profiles',
    { schema: { response: { 200: { type: 'array', items: maskedProfile }, ...errorResponses } } },
    async () => {
      try {
        return app.profiles.list().map(maskProfile);
      } catch (err) {
        if (err instanceof ProfileError) throw badProfile(err);
        throw err;
      }
    },
  );

  app.post<{ Body: Record<string, unknown>; Querystring: { replace?: boolean } }>(
    '/api/profiles',
    {
      schema: {
        // The profile itself is checked by @kbench/schema, for messages that name the field.
        body: { type: 'object' },
        querystring: requestSchema(profileSaveQuerySchema),
        response: { 201: maskedProfile, ...errorResponses },
      },
    },
    async (request, reply) => {
      let saved: TargetProfile;
      try {
        saved = app.profiles.save(request.body, { replace: Boolean(request.query.replace) });
      } catch (err) {
        if (err instanceof ProfileError) throw badProfile(err);
        if (err instanceof ProfileExistsError)
          throw new HttpError(409, `${err.message}; send ?replace=true to replace it`);
        throw err;
      }
      return reply.code(201).send(maskProfile(saved));
    },
  );

  app.delete<{ Params: { name: string } }>(
    '/api/profiles/:name',
    {
      schema: {
        params: requestSchema(profileNameParamsSchema),
        response: { 200: responseSchema(deletedSchema), ...errorResponses },
      },
    },
    async (request) => {
      if (!app.profiles.remove(request.params.name))
        throw new HttpError(404, `no profile ${request.params.name}`);
      return { deleted: request.params.name };
    },
  );
}
