/**
 * Errors of the domain: services, workers and helpers throw these, and know nothing of HTTP. The
 * HTTP edge (http/errors.ts) answers them in the spec's envelope: a record not found is 404, an
 * input or a change that cannot be applied is 422, a conflict with work in progress is 409, a
 * change the token's scopes do not reach is 403.
 */
export abstract class DomainError extends Error {}

/** A record the request names does not exist (`The {label} with given ID was not found.`). */
export class NotFoundError extends DomainError {
  constructor(label: string) {
    super(`The ${label} with given ID was not found.`);
  }
}

/** Input that fails validation, or a change that cannot be applied. */
export class ValidationError extends DomainError {}

/** The API token lacks a scope the change needs beyond its path's (403). */
export class ScopeRequiredError extends DomainError {
  constructor(scope: string) {
    super(`The API token does not have the ${scope} scope this request needs.`);
  }
}

/** The same work is in progress elsewhere (an Idempotency-Key still being processed). */
export class ConflictError extends DomainError {}

/** `user_id` reads as `user id` in messages, as the spec's wording has it. */
export const fieldLabel = (path: Array<string | number> | string): string =>
  (Array.isArray(path) ? path.join('.') : path).replace(/_/g, ' ');

export const invalid = (field: Array<string | number> | string) => new ValidationError(`The selected ${fieldLabel(field)} is invalid.`);
