import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinDate,
  ValidateNested,
} from 'class-validator';
import { securityOf } from './components.js';
import { DtoSchemas, normalize } from './dto-schemas.js';

class ConditionDto {
  @IsString()
  @MaxLength(20)
  attribute!: string;
}

class RuleDto {
  @IsInt()
  @Min(0)
  @Max(100)
  percentage!: number;

  @ValidateNested({ each: true })
  @Type(() => ConditionDto)
  @ArrayMaxSize(5)
  conditions!: ConditionDto[];

  @IsOptional()
  @IsIn(['a', 'b'])
  mode?: string;

  @IsOptional()
  @MinDate(() => new Date())
  startsAt?: Date;

  @IsOptional()
  @IsBoolean()
  active?: boolean;
}

describe('DtoSchemas', () => {
  it('turns validation rules into a closed JSON Schema, nested DTOs into components', () => {
    const dtos = new DtoSchemas();
    expect(dtos.ref(RuleDto)).toEqual({ $ref: '#/components/schemas/RuleDto' });
    expect(dtos.schemas.RuleDto).toEqual({
      type: 'object',
      properties: {
        percentage: { type: 'integer', minimum: 0, maximum: 100 },
        conditions: { type: 'array', items: { $ref: '#/components/schemas/ConditionDto' }, maxItems: 5 },
        mode: { type: 'string', enum: ['a', 'b'] },
        startsAt: { type: 'string', format: 'date-time' },
        active: { type: 'boolean' },
      },
      required: ['percentage', 'conditions'],
      additionalProperties: false,
    });
    expect(dtos.schemas.ConditionDto).toMatchObject({ required: ['attribute'], additionalProperties: false });
    expect(dtos.resolve(RuleDto)).toBe(dtos.schemas.RuleDto);
  });

  it('refuses two DTO classes of one name, since components are keyed by name', () => {
    const dtos = new DtoSchemas();
    dtos.ref(ConditionDto);
    const Other = (() => {
      class ConditionDto {
        @IsString()
        other!: string;
      }
      return ConditionDto;
    })();
    expect(() => dtos.ref(Other)).toThrow('Two DTO classes are named ConditionDto');
  });

  it("writes OpenAPI 3.0's nullable in its 3.1 form", () => {
    expect(normalize({ type: 'string', nullable: true })).toEqual({ type: ['string', 'null'] });
    expect(normalize({ properties: { nullable: { nullable: true, enum: [''] } } })).toEqual({
      properties: { nullable: { anyOf: [{ enum: [''] }, { type: 'null' }] } },
    });
  });
});

describe('securityOf', () => {
  it('lists the credentials an access rule accepts, identity headers with each', () => {
    expect(securityOf({ public: true })).toEqual([]);
    expect(securityOf({ session: 'admin', apiKey: ['org:read'] })).toEqual([
      { session: ['admin'] },
      { apiKey: ['org:read'] },
    ]);
    expect(securityOf({ session: 'viewer', personalKey: ['apps:read'] })).toEqual([
      { session: ['viewer'] },
      { apiKey: ['apps:read'] },
    ]);
    // An SDK route names its app by X-Bundle-ID and X-Team-ID (iOS) or X-Package-Name (Android).
    expect(securityOf({ tenant: true })).toEqual([{ bundleId: [], teamId: [] }, { packageName: [] }]);
    expect(securityOf({ tenant: true, deviceToken: true })).toEqual([
      { bundleId: [], teamId: [], attestationToken: [] },
      { bundleId: [], teamId: [], apiKey: ['flags:read'] },
      { packageName: [], attestationToken: [] },
      { packageName: [], apiKey: ['flags:read'] },
    ]);
  });
});
