import { once } from 'node:events';
import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { OPT_OUT_CSV_HEADER, optOutCsvLine, type Infer, type optOutSchemas } from '@bns/contracts';
import { RpcClient } from '@bns/service-kit';

type Schemas = ReturnType<typeof optOutSchemas>;

/** The account's suppression list, owned by the jobs service; every call acts as the given user. */
@Injectable()
export class OptOutsApi {
  constructor(private readonly rpc: RpcClient) {}

  async settings(userId: string) {
    return { success: true, settings: await this.rpc.call('jobs.optouts.settings.get', { userId }) };
  }

  async setSettings(userId: string, settings: Infer<Schemas['settingsPatch']>) {
    // Only the three settings go on (a body clerkUserId was the AuthGuard's); the jobs service checks the merged whole.
    return { success: true, settings: await this.rpc.call('jobs.optouts.settings.set', { userId, settings }) };
  }

  /** The whole list as CSV, a page at a time; the first page is asked for before anything is written, so a failure is still a clean error answer. */
  async export(userId: string, res: Response): Promise<void> {
    let page = await this.rpc.call('jobs.optouts.export', { userId });
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', 'attachment; filename="opt-outs.csv"');
    res.setHeader('Cache-Control', 'no-store');
    try {
      await this.write(res, `${OPT_OUT_CSV_HEADER}\r\n`);
      for (;;) {
        if (page.optOuts.length > 0) await this.write(res, page.optOuts.map((e) => `${optOutCsvLine(e)}\r\n`).join(''));
        if (!page.nextCursor || res.destroyed) break;
        page = await this.rpc.call('jobs.optouts.export', { userId, cursor: page.nextCursor });
      }
      res.end();
    } catch {
      // Headers are out: the only honest signal left is a cut connection, never a CSV that looks complete.
      res.destroy();
    }
  }

  async list(userId: string, query: Infer<Schemas['listHttpQuery']>) {
    const reply = await this.rpc.call('jobs.optouts.list', { userId, ...query });
    return { success: true, ...reply };
  }

  async add(userId: string, body: Infer<Schemas['phoneNumbersBody']>) {
    const reply = await this.rpc.call('jobs.optouts.add', { userId, phoneNumbers: body.phoneNumbers });
    return { success: true, ...reply };
  }

  async check(userId: string, body: Infer<Schemas['phoneNumbersBody']>) {
    return {
      success: true,
      ...(await this.rpc.call('jobs.optouts.check', { userId, phoneNumbers: body.phoneNumbers })),
    };
  }

  async remove(userId: string, phone: string) {
    await this.rpc.call('jobs.optouts.remove', { userId, phone });
    return { success: true };
  }

  private async write(res: Response, chunk: string): Promise<void> {
    if (!res.write(chunk)) await once(res, 'drain');
  }
}
