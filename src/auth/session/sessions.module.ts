import { Module } from '@nestjs/common';
import { ServiceSecretsRepository } from '../service-secrets.repository.js';
import { SessionsRepository } from './sessions.repository.js';

/**
 * The dashboard's session rows and auth's stored secrets, for every part of auth that ends
 * sessions or signs cookies (sign-in, the password gate, SSO) and for the session middleware.
 */
@Module({
  providers: [SessionsRepository, ServiceSecretsRepository],
  exports: [SessionsRepository, ServiceSecretsRepository],
})
export class SessionsModule {}
