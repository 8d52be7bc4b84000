import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { POLICY_LIMITS } from '@bns/contracts';
import { rows } from '@bns/service-kit';

/**
 * The unanswered budget's side of replies: a number's first reply to an account makes it a replier,
 * and takes its earlier sends (of the last 62 days, the most the lane's counts keep) off the days the
 * lane counted them in. Later sends to it are not counted (the send's statement looks it up).
 */
@Injectable()
export class UnansweredRepository {
  /**
   * Records that `phone` replied to the user at `at`; on its first reply, uncounts its sends. Call it
   * before the reply's fold touches the recipients: the lane's row lock comes first, as in a send.
   */
  async replied(em: EntityManager, userId: string, phone: string, at: Date): Promise<void> {
    await rows(
      em,
      `WITH fresh AS (
         INSERT INTO repliers (user_id, phone, at) VALUES ($1, $2, $3) ON CONFLICT (user_id, phone) DO NOTHING RETURNING user_id
       ), sends AS (
         SELECT to_char(r.done_at AT TIME ZONE coalesce(p.time_zone, $4), 'YYYY-MM-DD') AS day, count(*)::int AS n
           FROM fresh, job_recipients r JOIN jobs j ON j.id = r.job_id LEFT JOIN policies p ON p.user_id = j.user_id
          WHERE r.phone = $2 AND r.state = 'sent' AND j.user_id = $1 AND r.done_at > now() - interval '62 days'
          GROUP BY 1
       )
       UPDATE lanes SET unanswered = (
         SELECT coalesce(jsonb_object_agg(e.key, greatest(0, e.value::int - coalesce(s.n, 0))), '{}'::jsonb)
           FROM jsonb_each_text(lanes.unanswered) e LEFT JOIN sends s ON s.day = e.key)
        WHERE lanes.user_id = $1 AND EXISTS (SELECT 1 FROM sends)`,
      [userId, phone, at, POLICY_LIMITS.defaultTimeZone],
    );
  }
}
