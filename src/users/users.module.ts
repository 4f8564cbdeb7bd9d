import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountLifecycleService } from './account-lifecycle.service.js';
import { User } from './user.entity.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

/**
 * The people who sign in: the owner of the `users` table (UsersService), below every feature that
 * needs an address, a status or the super-admin flag (auth, organizations, team, api-keys), so
 * none of them reaches into another for it. Credentials are auth's: it stores the password hash
 * through here and keeps sessions, sign-in and keys itself, taking part in an account's
 * deactivation with a provider marked `@OnAccountsDeactivated()` (AccountLifecycleService finds it).
 */
@Module({
  imports: [TypeOrmModule.forFeature([User]), DiscoveryModule],
  providers: [UsersRepository, UsersService, AccountLifecycleService],
  exports: [UsersService, AccountLifecycleService],
})
export class UsersModule {}
