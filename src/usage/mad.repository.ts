import { sqlReference } from '../database/sql.js';

/**
 * The monthly-active-device tables' part of the device update a refresh makes, so that a device
 * already counted costs the refresh no statement of its own: true when the device `deviceId` is
 * in `mad_devices` of the organization for every period start in `periodStarts` (a `date[]`
 * parameter). Each argument is a parameter or a column of the caller's query. A true answer is
 * final for the period (rows are only added to it); a false one sends the caller to
 * `MadService.count`, whose upsert decides.
 */
export function madDeviceCounted(organizationId: string, periodStarts: string, deviceId: string): string {
  const periods = `${sqlReference(periodStarts)}::date[]`;
  return `((SELECT count(*) FROM mad_devices
             WHERE organization_id = ${sqlReference(organizationId)} AND device_id = ${sqlReference(deviceId)}
               AND period_start = ANY (${periods})) = cardinality(${periods}))`;
}
