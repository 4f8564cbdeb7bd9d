import type { Response } from 'express';
import { randomSecret } from '../../common/crypto.js';
import { contentSecurityPolicy, renderDevicePage, type DevicePage } from '../device-login/device-pages.js';

/** Answers one of the server-rendered pages (the device-login page's look), with its CSP nonce. */
export function sendPage(response: Response, status: number, page: DevicePage): void {
  const nonce = randomSecret(16);
  response
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': contentSecurityPolicy(nonce),
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'same-origin',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
    })
    .send(renderDevicePage(page, nonce));
}
