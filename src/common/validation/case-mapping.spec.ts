import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max } from 'class-validator';
import { ValidationFailedException } from '../errors/app-exception.js';
import { camelCase, fromSnakeCase, snakeCase, SnakeCaseType } from './case-mapping.js';
import { createValidationPipe } from './validation.js';

class WidgetDto {
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  widgetName!: string;

  @IsInt()
  @Max(10)
  partCount!: number;

  @IsOptional()
  @Matches(/^[a-z]+$/, { message: 'colourCode must be lower-case letters' })
  colourCode?: string;

  @IsOptional()
  @IsBoolean()
  isActive?: boolean;
}

class SnakeWidgetDto extends SnakeCaseType(WidgetDto) {}

class OptionalSnakeWidgetDto extends SnakeCaseType(WidgetDto, { optional: true }) {}

async function validate(metatype: new () => object, body: unknown): Promise<unknown> {
  return createValidationPipe().transform(body, { type: 'body', metatype });
}

async function problems(metatype: new () => object, body: unknown) {
  try {
    await validate(metatype, body);
  } catch (error) {
    if (error instanceof ValidationFailedException) return error.fieldErrors;
    throw error;
  }
  throw new Error('the body was accepted');
}

describe('case mapping', () => {
  it('converts names both ways', () => {
    expect(snakeCase('claimKey')).toBe('claim_key');
    expect(snakeCase('country')).toBe('country');
    expect(camelCase('claim_key')).toBe('claimKey');
    expect(camelCase(snakeCase('firstSeenDays'))).toBe('firstSeenDays');
  });

  it('validates the snake_case names with the rules and conversions of the camelCase DTO', async () => {
    const valid = await validate(SnakeWidgetDto, { widget_name: '  gear ', part_count: 3, is_active: true });
    expect(valid).toBeInstanceOf(SnakeWidgetDto);
    expect(valid).toEqual({ widget_name: 'gear', part_count: 3, is_active: true });
    expect(await problems(SnakeWidgetDto, { widget_name: 'gear', part_count: 11, colour_code: 'RED' })).toEqual([
      { field: 'part_count', message: 'must not be greater than 10' },
      { field: 'colour_code', message: 'must be lower-case letters' },
    ]);
  });

  it('refuses the camelCase names on the snake_case DTO', async () => {
    expect(await problems(SnakeWidgetDto, { widgetName: 'gear', part_count: 1 })).toEqual([
      { field: 'widgetName', message: 'property widgetName should not exist' },
      { field: 'widget_name', message: 'must be a string' },
    ]);
  });

  it('makes every property optional on request', async () => {
    expect(await validate(OptionalSnakeWidgetDto, {})).toEqual({});
    expect(await problems(OptionalSnakeWidgetDto, { part_count: 12 })).toEqual([
      { field: 'part_count', message: 'must not be greater than 10' },
    ]);
    expect(await problems(SnakeWidgetDto, {})).toEqual([
      { field: 'widget_name', message: 'must be a string' },
      { field: 'part_count', message: 'must not be greater than 10' },
    ]);
  });

  it('leaves the camelCase DTO as it was', async () => {
    expect(await problems(WidgetDto, { widget_name: 'gear', partCount: 1 })).toEqual([
      { field: 'widget_name', message: 'property widget_name should not exist' },
      { field: 'widgetName', message: 'must be a string' },
    ]);
  });

  it('gives a snake_case DTO back under its camelCase names, nested values untouched', () => {
    expect(
      fromSnakeCase<{ widgetName: string; partsList: object }>({ widget_name: 'gear', parts_list: { inner_name: 1 } }),
    ).toEqual({
      widgetName: 'gear',
      partsList: { inner_name: 1 },
    });
  });
});
