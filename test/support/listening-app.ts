import { startTestApp, type TestApp } from '../harness/test-app.js';
import { freePort } from './server-process.js';

/**
 * The test app listening on 127.0.0.1 for clients outside the process (a browser, the compiled
 * command-line client), with BASE_URL naming that very address: verification URLs then open the
 * page, and the browser's Origin header passes the cross-site check.
 */
export async function startListeningApp(env: Record<string, string> = {}): Promise<{ t: TestApp; baseUrl: string }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const t = await startTestApp({ BASE_URL: baseUrl, ...env });
  const server = t.app.getHttpServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return { t, baseUrl };
}
