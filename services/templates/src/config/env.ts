/** Templates has no variables of its own beyond the common and database ones (service-kit). */
export const TEMPLATES_ENV = {};
