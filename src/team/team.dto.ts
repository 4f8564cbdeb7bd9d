import { Transform } from 'class-transformer';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { ROLES, type Role } from '../common/access/access.decorator.js';
import type { Invite } from './invite.entity.js';

const ROLE_MESSAGE = `role must be one of: ${ROLES.join(', ')}`;

/** Roles are shown capitalised in the dashboard; either spelling is accepted. */
const lowerCase = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value);
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class CreateInviteDto {
  @Transform(trim)
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be an e-mail address' })
  email!: string;

  /** Defaults to member. */
  @IsOptional()
  @Transform(lowerCase)
  @IsIn(ROLES, { message: ROLE_MESSAGE })
  role?: Role;
}

export class ChangeRoleDto {
  @Transform(lowerCase)
  @IsIn(ROLES, { message: ROLE_MESSAGE })
  role!: Role;
}

export interface MemberRecord {
  userId: string;
  email: string;
  role: Role;
  joinedAt: Date;
}

export interface MemberResponse {
  userId: string;
  email: string;
  role: MemberRecord['role'];
  joinedAt: Date;
}

export function toMemberResponse(member: MemberRecord): MemberResponse {
  return { userId: member.userId, email: member.email, role: member.role, joinedAt: member.joinedAt };
}

export interface InviteResponse {
  id: string;
  email: string;
  role: Invite['role'];
  status: Invite['status'];
  invitedBy: string | null;
  expiresAt: Date;
  createdAt: Date;
}

export function toInviteResponse(invite: Invite): InviteResponse {
  return {
    id: invite.id,
    email: invite.email,
    role: invite.role,
    status: invite.status,
    invitedBy: invite.invitedBy,
    expiresAt: invite.expiresAt,
    createdAt: invite.createdAt,
  };
}
