// Every route the running application serves, read from the same metadata Nest routes by, so the
// robustness tests cover a route the day it is added (and fail for one without an access rule).
import { RequestMethod, type CanActivate, type INestApplication, type Type } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import { ACCESS_KEY, type AccessRule } from '../../src/common/access/access.decorator.js';
import { declaredUuidParams } from '../../src/common/validation/uuid-param.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Route {
  readonly controller: string;
  readonly handler: string;
  readonly method: Method;
  /** Express form: `/api/v1/apps/:appID`. */
  readonly path: string;
  /** The `@Access` declaration of the handler, else of its controller; undefined when neither has one. */
  readonly access: AccessRule | undefined;
  /** Route-level guards (`@UseGuards`) besides the global access guard. */
  readonly guards: readonly string[];
  /** The class of the `@Body()` parameter (`Object` when untyped); null when the handler takes no body. */
  readonly body: Type | null;
  /** The class of a whole-object `@Query()` parameter, null otherwise. */
  readonly query: Type | null;
  /** Names of `@Query('name')` parameters. */
  readonly queryNames: readonly string[];
  /** Path parameters; `uuid` when a ParseUUIDPipe checks it, or a pipe over all params declares it a UUID. */
  readonly params: readonly { readonly name: string; readonly uuid: boolean }[];
}

const METHODS: Partial<Record<RequestMethod, Method>> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
  [RequestMethod.PUT]: 'put',
  [RequestMethod.PATCH]: 'patch',
  [RequestMethod.DELETE]: 'delete',
};

interface RouteArgument {
  readonly index: number;
  readonly data?: unknown;
  readonly pipes?: readonly unknown[];
}

/** The routes of every controller registered in the application, sorted by path then method. */
export function routeTable(app: INestApplication): Route[] {
  const controllers = new Set<Type>();
  for (const module of app.get(ModulesContainer, { strict: false }).values()) {
    for (const wrapper of module.controllers.values()) if (wrapper.metatype) controllers.add(wrapper.metatype as Type);
  }
  const scanner = new MetadataScanner();
  const routes: Route[] = [];
  for (const controller of controllers) {
    const prototype = controller.prototype as Record<string, object>;
    for (const handler of scanner.getAllMethodNames(prototype)) {
      const target = prototype[handler];
      const requestMethod = Reflect.getMetadata(METHOD_METADATA, target) as RequestMethod | undefined;
      const handlerPaths = Reflect.getMetadata(PATH_METADATA, target) as string | string[] | undefined;
      if (requestMethod === undefined || handlerPaths === undefined) continue;
      const method = METHODS[requestMethod];
      if (!method) throw new Error(`${controller.name}.${handler}: unexpected request method ${requestMethod}`);
      const args = routeArguments(controller, handler);
      const paramTypes = (Reflect.getMetadata('design:paramtypes', prototype, handler) ?? []) as Type[];
      const ofType = (type: RouteParamtypes) => args.filter((arg) => arg.type === Number(type));
      const body = ofType(RouteParamtypes.BODY)[0];
      const wholeQuery = ofType(RouteParamtypes.QUERY).find((arg) => arg.data === undefined);
      const pipes = new Map(ofType(RouteParamtypes.PARAM).map((arg) => [String(arg.data), arg.pipes ?? []]));
      const declaredUuids = ofType(RouteParamtypes.PARAM)
        .filter((arg) => arg.data === undefined)
        .flatMap((arg) => (arg.pipes ?? []).flatMap(declaredUuidParams));
      const access = (Reflect.getMetadata(ACCESS_KEY, target) ?? Reflect.getMetadata(ACCESS_KEY, controller)) as
        AccessRule | undefined;
      const guards = [
        ...((Reflect.getMetadata(GUARDS_METADATA, controller) ?? []) as Type<CanActivate>[]),
        ...((Reflect.getMetadata(GUARDS_METADATA, target) ?? []) as Type<CanActivate>[]),
      ].map((guard) => guard.name);
      for (const base of asArray(Reflect.getMetadata(PATH_METADATA, controller) as string | string[])) {
        for (const own of asArray(handlerPaths)) {
          const path = `/${[base, own]
            .flatMap((part) => part.split('/'))
            .filter(Boolean)
            .join('/')}`;
          routes.push({
            controller: controller.name,
            handler,
            method,
            path,
            access,
            guards,
            body: body ? (body.data === undefined ? (paramTypes[body.index] ?? Object) : Object) : null,
            query: wholeQuery ? (paramTypes[wholeQuery.index] ?? null) : null,
            queryNames: ofType(RouteParamtypes.QUERY)
              .map((arg) => arg.data)
              .filter((data): data is string => typeof data === 'string'),
            params: [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name]) => ({
              name,
              uuid:
                declaredUuids.includes(name) ||
                (pipes.get(name) ?? []).some((pipe) => (pipe as object)?.constructor?.name === 'ParseUUIDPipe'),
            })),
          });
        }
      }
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

/** `GET /api/v1/apps/:appID`. */
export function routeName(route: Pick<Route, 'method' | 'path'>): string {
  return `${route.method.toUpperCase()} ${route.path}`;
}

/** The declaration as one short phrase, for test names. */
export function describeAccess(rule: AccessRule | undefined): string {
  if (!rule) return 'NO ACCESS DECLARATION';
  if (rule.public) return 'public';
  const parts: string[] = [];
  if (rule.tenant) {
    parts.push(
      rule.deviceToken
        ? 'tenant + device token or key'
        : rule.deviceTokenIfSent
          ? 'tenant headers (+ device token if sent)'
          : 'tenant headers',
    );
  }
  if (rule.session) parts.push(`session ${rule.session}`);
  if (rule.apiKey) parts.push(rule.apiKey.length ? `key [${rule.apiKey.join(', ')}]` : 'any key');
  return parts.join(' | ');
}

/** Fills the path parameters: `values[name]`, else a fresh UUID-shaped value from `fallback`. */
export function fillPath(route: Route, values: Record<string, string>, fallback: (name: string) => string): string {
  return route.path.replace(/:([A-Za-z0-9_]+)/g, (_match, name: string) =>
    encodeURIComponent(values[name] ?? fallback(name)),
  );
}

function routeArguments(controller: Type, handler: string): (RouteArgument & { type: number })[] {
  const metadata = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler) ?? {}) as Record<
    string,
    RouteArgument
  >;
  // Keys are `<type>:<index>`; custom parameter decorators (`@Auth()`) have non-numeric types.
  return Object.entries(metadata)
    .map(([key, arg]) => ({ ...arg, type: Number(key.split(':')[0]) }))
    .filter((arg) => Number.isInteger(arg.type));
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? ([''] as T[]) : Array.isArray(value) ? value : [value];
}
