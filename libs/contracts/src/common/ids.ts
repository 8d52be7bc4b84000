/** The form of every id the services make (jobs, templates): a UUID, any version, any case. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is an id of the services' form: anything else names nothing, and is never looked up or kept. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
