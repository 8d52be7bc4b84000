import { LIMITS } from '../common/limits.js';

/**
 * Texts of the templates module that the spec does not give (type errors of the JSON body, the filter,
 * not found). The spec's own texts are in MESSAGES (common/messages.ts).
 */
export const TEMPLATE_MESSAGES = {
  nameNotText: 'Template name must be text',
  messageContentNotText: 'Message content must be text',
  descriptionNotText: 'Description must be text',
  isFavoriteNotBoolean: 'Favorite must be true or false',
  phoneNumbersNotList: 'Phone numbers must be a list of numbers (an array or a JSON array string)',
  bodyNotObject: 'The template must be a JSON object',
  favoriteFilterInvalid: 'is_favorite must be true or false',
  templateNotFound: 'Template not found',
  /** A create or duplicate past LIMITS.templatesPerUserMax. */
  limitReached: `You can keep up to ${LIMITS.templatesPerUserMax} templates. Delete one to add another.`,
} as const;
