declare module 'proxy-addr' {
  import type { IncomingMessage } from 'node:http';
  type Trust = (addr: string, hop: number) => boolean;
  function proxyaddr(req: IncomingMessage, trust: Trust): string;
  namespace proxyaddr {
    function compile(value: string | string[]): Trust;
  }
  export default proxyaddr;
}
