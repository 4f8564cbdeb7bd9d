import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { IsInt, IsString, Min, getMetadataStorage, validate } from 'class-validator';
import { cacheValidationMetadata } from './metadata-cache.js';

class Parent {
  @IsString()
  name!: unknown;
}

class Child extends Parent {
  @IsInt()
  count!: unknown;

  @IsString({ groups: ['strict'] })
  note!: unknown;
}

function child(values: Record<string, unknown>): Child {
  return Object.assign(new Child(), values);
}

async function failing(object: object, groups?: string[]): Promise<string[]> {
  const errors = await validate(object, { groups, strictGroups: true });
  return errors.flatMap((error) => Object.keys(error.constraints ?? {}).map((name) => `${error.property}:${name}`));
}

describe('the validation metadata cache', () => {
  it("answers class-validator's own rules: inherited ones, and per group", async () => {
    cacheValidationMetadata();
    // Installing twice changes nothing.
    cacheValidationMetadata();
    for (let round = 0; round < 2; round++) {
      expect(await failing(child({ name: 1, count: 'x', note: 2 }))).toEqual(['count:isInt', 'name:isString']);
      expect(await failing(child({ name: 1, count: 'x', note: 2 }), ['strict'])).toEqual(['note:isString']);
      expect(await failing(child({ name: 'a', count: 1 }))).toEqual([]);
    }
    const storage = getMetadataStorage();
    const first = storage.getTargetValidationMetadatas(Child, '', false, true);
    expect(storage.getTargetValidationMetadatas(Child, '', false, true)).toBe(first);
    expect(storage.groupByPropertyName(first)).toBe(storage.groupByPropertyName(first));
  });

  it('forgets what it remembered when a rule is added after a lookup', async () => {
    cacheValidationMetadata();
    expect(await failing(child({ name: 'a', count: 3 }))).toEqual([]);
    // A rule registered after the class was first validated, as a late-loaded decorator would.
    Min(5)(Child.prototype, 'count');
    expect(await failing(child({ name: 'a', count: 3 }))).toEqual(['count:min']);
  });
});
