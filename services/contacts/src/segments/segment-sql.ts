import type { SegmentRule } from '@bns/contracts';

const CAMPAIGN_COLUMN = {
  messaged: 'messaged_at',
  delivered: 'delivered_at',
  read: 'read_at',
  replied: 'replied_at',
  failed: 'failed_at',
} as const;
const LAST_COLUMN = {
  messaged: 'last_messaged_at',
  delivered: 'last_delivered_at',
  read: 'last_read_at',
  replied: 'last_replied_at',
} as const;

/**
 * A segment's rule as SQL over `contacts c LEFT JOIN phone_facts f`: every condition must hold (AND).
 * Values travel as parameters, appended to `params` (which already holds the query's own); column
 * names come only from the constants above, never from the rule.
 */
export function segmentWhere(rule: SegmentRule, params: unknown[]): string[] {
  const where: string[] = [];
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const tags = rule.tags ?? {};
  if (tags.anyOf && tags.anyOf.length > 0) where.push(`c.tags && ${p(tags.anyOf)}::text[]`);
  if (tags.allOf && tags.allOf.length > 0) where.push(`c.tags @> ${p(tags.allOf)}::text[]`);
  if (tags.noneOf && tags.noneOf.length > 0) where.push(`NOT (c.tags && ${p(tags.noneOf)}::text[])`);

  for (const f of rule.fields ?? []) {
    // `name` is the contact's own name unless the contact has a field of that name.
    const value = f.key === 'name' ? `coalesce(c.fields->>'name', c.name)` : `(c.fields->>${p(f.key)})`;
    if (f.op === 'isEmpty') where.push(`coalesce(btrim(${value}), '') = ''`);
    else if (f.op === 'equals') where.push(`lower(btrim(${value})) = lower(btrim(${p(f.value ?? '')}))`);
    else where.push(`strpos(lower(${value}), lower(${p(f.value ?? '')})) > 0`);
  }

  for (const f of rule.facts ?? []) {
    const yes = f.value !== false;
    let test: string;
    switch (f.fact) {
      case 'optedOut':
        test = `f.opted_out_at IS NOT NULL`;
        break;
      case 'notOnWhatsApp':
        test = `f.not_on_whatsapp_at IS NOT NULL`;
        break;
      case 'notMessagedForDays':
        test = `(f.last_messaged_at IS NULL OR f.last_messaged_at < now() - make_interval(days => ${p(f.days ?? 1)}::int))`;
        break;
      default: {
        const column = CAMPAIGN_COLUMN[f.fact];
        if (f.jobId !== undefined || f.fact === 'failed') {
          test = `EXISTS (SELECT 1 FROM campaign_outcomes o WHERE o.user_id = c.user_id AND o.phone = c.phone AND o.${column} IS NOT NULL${
            f.jobId !== undefined ? ` AND o.job_id = ${p(f.jobId)}::uuid` : ''
          })`;
        } else {
          test = `f.${LAST_COLUMN[f.fact]} IS NOT NULL`;
        }
      }
    }
    where.push(yes ? test : `NOT coalesce(${test}, false)`);
  }
  return where;
}
