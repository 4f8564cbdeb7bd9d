// PORT=3000 node bench/ceiling-nest.mjs
// The framework's ceiling: a bare NestJS application on the service's adapter
// (@nestjs/platform-express, the same Nest version) with one JSON route, GET /health answering
// what the service's /health answers, and the Express settings the service makes (no ETag, no
// X-Powered-By). No middleware, guards, interceptors, filters or pipes of the service's own: what
// GET /health costs beyond this is the service's per-request pipeline. bench/run.mjs starts it as
// its own process, as it starts the real server, and loads it with the same autocannon settings.
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

class HealthController {
  health() {
    return { status: 'healthy', timestamp: new Date().toISOString(), commit: 'bench-ceiling' };
  }
}
Reflect.decorate(
  [Get('health')],
  HealthController.prototype,
  'health',
  Object.getOwnPropertyDescriptor(HealthController.prototype, 'health'),
);
const Controllers = Reflect.decorate([Controller()], HealthController);

class CeilingModule {}
const AppModule = Reflect.decorate([Module({ controllers: [Controllers] })], CeilingModule);

const app = await NestFactory.create(AppModule, { logger: false });
app.disable('x-powered-by');
app.set('etag', false);
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');
