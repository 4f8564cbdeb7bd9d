import dns2 from 'dns2';

/**
 * An authoritative DNS server for the tests on 127.0.0.1 (the `dns2` package, UDP): TXT records
 * are set per test; any other name answers NXDOMAIN. The service reaches it through
 * `DNS_SERVERS=<server>`.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, the value for DNS_SERVERS. */
  readonly server: string;
  setTxt(name: string, values: readonly string[]): void;
  deleteTxt(name: string): void;
  close(): Promise<void>;
}

/** RFC 1035 response code: the name does not exist. */
const NXDOMAIN = 3;

export async function startDnsServer(): Promise<TestDnsServer> {
  const { Packet } = dns2;
  const records = new Map<string, readonly string[]>();
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const values = records.get(question.name.toLowerCase());
      if (!values) {
        response.header.rcode = NXDOMAIN;
      } else if (question.type === Packet.TYPE.TXT) {
        for (const data of values) {
          // The typings ask for a toBuffer that the package supplies itself when it encodes answers.
          const answer = { name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data };
          response.answers.push(answer as unknown as (typeof response.answers)[number]);
        }
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return {
    server: `127.0.0.1:${addresses.udp!.port}`,
    setTxt: (name, values) => records.set(name.toLowerCase(), values),
    deleteTxt: (name) => records.delete(name.toLowerCase()),
    close: () => server.close(),
  };
}
