/**
 * Tenant ids in the types (decision 0070). Every repository method on a tenant table takes the
 * organization's (or app's) id as one of these brands, and only the access layer (the access
 * guard, the session resolver, the SDK's tenant resolver) and the owners' repositories (ids read
 * back from tenant rows, for jobs that walk every organization) produce them: a query whose
 * organization id came from anywhere else (a request body, a path parameter) does not compile.
 * `npm run lint` (the data-access check, `EXCEPTIONS` in scripts/sql-owners.mjs) lets only
 * repositories and the files listed there call `trustOrganizationId` and `trustAppId`.
 */
declare const organizationIdBrand: unique symbol;
declare const appIdBrand: unique symbol;

/** An organization's id, established by the access layer or read from a tenant row. */
export type OrganizationId = string & { readonly [organizationIdBrand]: true };

/** An app's id, established as belonging to the caller's organization. */
export type AppId = string & { readonly [appIdBrand]: true };

/** Brands an organization id: for the access layer and the owners' repositories only. */
export function trustOrganizationId(id: string): OrganizationId {
  return id as OrganizationId;
}

/** Brands an app id: for the access layer and the owners' repositories only. */
export function trustAppId(id: string): AppId {
  return id as AppId;
}
