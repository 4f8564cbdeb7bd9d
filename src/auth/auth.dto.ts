import { Transform } from 'class-transformer';
import { IsEmail, IsString, Length, MaxLength, MinLength } from 'class-validator';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class EmailField {
  @Transform(trim)
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be an e-mail address' })
  email!: string;
}

export class RegisterDto extends EmailField {
  @IsString()
  @MinLength(8, { message: 'password must be at least 8 characters' })
  @MaxLength(128)
  password!: string;

  @Transform(trim)
  @IsString()
  @Length(1, 100)
  organizationName!: string;
}

export class LoginDto extends EmailField {
  @IsString()
  @Length(1, 128)
  password!: string;
}

export class ForgotPasswordDto extends EmailField {}

export class ResetPasswordDto {
  @IsString()
  @Length(1, 200)
  token!: string;

  @IsString()
  @MaxLength(128)
  password!: string;

  @IsString()
  @MaxLength(128)
  confirm_password!: string;
}

export class ChangeEmailDto {
  @Transform(trim)
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'new_email must be an e-mail address' })
  new_email!: string;
}

export class TokenDto {
  @IsString()
  @Length(1, 200)
  token!: string;
}

export class SwitchOrgDto {
  @IsString()
  @Length(1, 100)
  slug!: string;
}
