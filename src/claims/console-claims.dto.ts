import { Type } from 'class-transformer';
import { IsArray, ArrayMaxSize, IsDefined, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { SnakeCaseType } from '../common/validation/case-mapping.js';
import { MAX_CLAIM_KEY_LENGTH } from './claim-input.js';
import { IsAdditionalData } from './claim-validators.js';
import {
  CreateClaimDto,
  DeviceProfileDto,
  MAX_REORDER_IDS,
  TestClaimDefinitionDto,
  UpdateClaimDto,
} from './claims.dto.js';

/*
 * The console surface's bodies. A claim and a device are the session surface's DTOs with
 * snake_case top-level names (the rules live in claims.dto.ts); the envelopes are the console's own.
 */

export class ConsoleCreateClaimDto extends SnakeCaseType(CreateClaimDto) {}

export class ConsoleUpdateClaimDto extends SnakeCaseType(UpdateClaimDto) {}

export class ConsoleTestClaimDefinitionDto extends SnakeCaseType(TestClaimDefinitionDto) {}

/** Every field optional: unset ones take the preview device's defaults. */
export class ConsoleDeviceContextDto extends SnakeCaseType(DeviceProfileDto, { optional: true }) {
  @IsOptional()
  @IsAdditionalData()
  additional_data?: Record<string, string>;
}

/**
 * Preview body: the device context itself. The same fields are also accepted nested under
 * `device_context` (which wins where both are given), for clients that keep the context apart.
 */
export class ConsolePreviewClaimDto extends ConsoleDeviceContextDto {
  @IsOptional()
  @ValidateNested()
  @Type(() => ConsoleDeviceContextDto)
  device_context?: ConsoleDeviceContextDto;
}

export class ConsoleTestClaimDto extends ConsolePreviewClaimDto {
  @IsDefined()
  @ValidateNested()
  @Type(() => ConsoleTestClaimDefinitionDto)
  claim!: ConsoleTestClaimDefinitionDto;
}

/** Claims are addressed by UUID or by claim key on the console. */
export class ConsoleReorderClaimsDto {
  @IsArray()
  @ArrayMaxSize(MAX_REORDER_IDS)
  @IsString({ each: true })
  @MaxLength(MAX_CLAIM_KEY_LENGTH, { each: true })
  claim_ids!: string[];
}
