import { RequestMethod, type INestApplication, type Type } from '@nestjs/common';
import {
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { ModulesContainer } from '@nestjs/core';
import { ACCESS_KEY, type AccessRule } from '../common/access/access.decorator.js';
import { declaredUuidParams } from '../common/validation/uuid-param.js';
import { RATE_LIMITS_KEY } from '../rate-limit/rate-limit.guard.js';

/** The metadata key of `@InvalidInputStatus` (src/common/validation/validation.ts). */
const INVALID_INPUT_STATUS_KEY = 'invalidInputStatus';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options' | 'head';

/** One route a controller declares, as the router registers it. */
export interface RouteInfo {
  readonly controller: Type;
  readonly handlerName: string;
  /**
   * The operation id the document uses: `<Controller>_<handler>`, and for a handler serving more
   * than one path the alias's own (`aliasOperationIds`).
   */
  readonly operationId: string;
  /** The id @nestjs/swagger gives the operation it generates for this path (`generatedOperationIdOf`). */
  readonly generatedOperationId: string;
  /** `<Controller>_<handler>`: one per handler, whatever its paths; response schemas are keyed by it. */
  readonly handlerId: string;
  readonly method: HttpMethod;
  /** Express form, `/api/v1/apps/:appID`. */
  readonly expressPath: string;
  /** OpenAPI form, `/api/v1/apps/{appID}`. */
  readonly openApiPath: string;
  readonly access: AccessRule | undefined;
  /** `@HttpCode`, else 201 for POST and 200 otherwise (Nest's default). */
  readonly successStatus: number;
  /** 400 for `@InvalidInputStatus(400)` routes, else 422. */
  readonly invalidInputStatus: 400 | 422;
  /** The class of an `@Body()` parameter, or `Object` for an untyped one; null without a body parameter. */
  readonly body: Type | null;
  /** The class of a whole-object `@Query()` parameter. */
  readonly query: Type | null;
  /** Named `@Query('name')` parameters. */
  readonly queryNames: readonly string[];
  /**
   * Path parameters; `uuid` when the parameter goes through `ParseUUIDPipe`, or a pipe over the
   * whole params object declares it a UUID (`DeclaresUuidParams`).
   */
  readonly pathParams: readonly { readonly name: string; readonly uuid: boolean }[];
  /** The handler writes the response itself (`@Res()` without passthrough). */
  readonly rawResponse: boolean;
  /** The limits the route declares with `@RateLimit(...)` (handler and controller). */
  readonly rateLimits: readonly string[];
}

const METHODS: Partial<Record<RequestMethod, HttpMethod>> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
  [RequestMethod.PUT]: 'put',
  [RequestMethod.PATCH]: 'patch',
  [RequestMethod.DELETE]: 'delete',
  [RequestMethod.OPTIONS]: 'options',
  [RequestMethod.HEAD]: 'head',
};

interface RouteArgument {
  readonly index: number;
  readonly data?: unknown;
  readonly pipes?: readonly unknown[];
}

/** Every route of every controller of the application, from the same metadata Nest routes by. */
export function routeTable(app: INestApplication): RouteInfo[] {
  const controllers = new Set<Type>();
  for (const module of app.get(ModulesContainer, { strict: false }).values()) {
    for (const wrapper of module.controllers.values()) if (wrapper.metatype) controllers.add(wrapper.metatype as Type);
  }
  const routes: RouteInfo[] = [];
  for (const controller of controllers) routes.push(...controllerRoutes(controller));
  const seen = new Set<string>();
  for (const route of routes) {
    if (seen.has(route.operationId)) throw new Error(`OpenAPI: two routes have the operation id ${route.operationId}`);
    seen.add(route.operationId);
  }
  return routes.sort((a, b) => a.openApiPath.localeCompare(b.openApiPath) || a.method.localeCompare(b.method));
}

function controllerRoutes(controller: Type): RouteInfo[] {
  const prototype = controller.prototype as Record<string, unknown>;
  const routes: RouteInfo[] = [];
  for (const handlerName of methodNames(prototype)) {
    const handler = prototype[handlerName] as object;
    const requestMethod = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
    const handlerPaths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
    if (requestMethod === undefined || handlerPaths === undefined) continue;
    const method = METHODS[requestMethod];
    if (!method)
      throw new Error(`${controller.name}.${handlerName}: request method ${requestMethod} is not documented`);
    const args = routeArguments(controller, handlerName);
    const paramTypes = (Reflect.getMetadata('design:paramtypes', prototype, handlerName) ?? []) as Type[];
    const ofType = (type: RouteParamtypes) => args.filter((arg) => arg.type === type);
    const body = ofType(RouteParamtypes.BODY)[0];
    const wholeQuery = ofType(RouteParamtypes.QUERY).find((arg) => arg.data === undefined);
    const response = ofType(RouteParamtypes.RESPONSE)[0];
    const pipedParams = new Map(ofType(RouteParamtypes.PARAM).map((arg) => [String(arg.data), arg.pipes ?? []]));
    const declaredUuids = ofType(RouteParamtypes.PARAM)
      .filter((arg) => arg.data === undefined)
      .flatMap((arg) => (arg.pipes ?? []).flatMap(declaredUuidParams));
    const access = (Reflect.getMetadata(ACCESS_KEY, handler) ?? Reflect.getMetadata(ACCESS_KEY, controller)) as
      AccessRule | undefined;
    const invalidInputStatus = (Reflect.getMetadata(INVALID_INPUT_STATUS_KEY, handler) ??
      Reflect.getMetadata(INVALID_INPUT_STATUS_KEY, controller)) as 400 | undefined;
    const httpCode = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
    const rateLimits = [handler, controller].flatMap(
      (target) => (Reflect.getMetadata(RATE_LIMITS_KEY, target) ?? []) as string[],
    );

    // In the order @nestjs/swagger (and Nest's router) build them: each controller path, then each handler path.
    const expressPaths = asArray(
      Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined,
    ).flatMap((controllerPath) => asArray(handlerPaths).map((handlerPath) => joinPath(controllerPath, handlerPath)));
    const operationIds = aliasOperationIds(controller.name, handlerName, expressPaths);
    expressPaths.forEach((expressPath, index) => {
      const pathParams = pathParamNames(expressPath).map((name) => ({
        name,
        uuid:
          declaredUuids.includes(name) ||
          (pipedParams.get(name) ?? []).some((pipe) => pipe?.constructor?.name === 'ParseUUIDPipe'),
      }));
      routes.push({
        controller,
        handlerName,
        operationId: operationIds[index],
        generatedOperationId: generatedOperationIdOf(controller.name, handlerName, index, expressPaths.length),
        handlerId: operationIdOf(controller.name, handlerName),
        method,
        expressPath,
        openApiPath: expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}'),
        access,
        successStatus: httpCode ?? (method === 'post' ? 201 : 200),
        invalidInputStatus: invalidInputStatus ?? 422,
        body: body ? (body.data === undefined ? (paramTypes[body.index] ?? Object) : Object) : null,
        query: wholeQuery ? (paramTypes[wholeQuery.index] ?? null) : null,
        queryNames: ofType(RouteParamtypes.QUERY)
          .map((arg) => arg.data)
          .filter((data): data is string => typeof data === 'string'),
        pathParams,
        rawResponse:
          response !== undefined &&
          Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, handlerName) !== true,
        rateLimits,
      });
    });
  }
  return routes;
}

/**
 * The operation ids @nestjs/swagger is told to use (see `createDocument`), so both sides agree.
 * @nestjs/swagger passes the handler's name, or for a handler serving several paths (aliases,
 * `@Get(['a', 'b'])`) its name with the path's index, `get[1]` (swagger-explorer.js, `isAlias`).
 */
export function operationIdOf(controllerName: string, methodKey: string): string {
  return `${controllerName}_${methodKey}`;
}

/**
 * The operation id @nestjs/swagger generates for path `index` of `count` of a handler: the key it
 * passes `operationIdOf` is the handler's name, or `<handler>[<index>]` when the handler has
 * several paths. (Its rule also counts URI versions, which this application does not use.)
 */
function generatedOperationIdOf(controllerName: string, handlerName: string, index: number, count: number): string {
  return operationIdOf(controllerName, count > 1 ? `${handlerName}[${index}]` : handlerName);
}

/**
 * The document's operation id of each path of a handler, stable and readable:
 * - the first path keeps `<Controller>_<handler>`, as a handler of one path has it;
 * - each further path (an alias) is named by what it addresses by: `<Controller>_<handler>By<Param>`,
 *   `<Param>` the last path parameter of the alias that the first path does not have, capitalised
 *   (`apps/:appId/flags/:flagKey` beside `flags/:flagId`: `FlagsController_getByFlagKey`);
 * - an alias without such a parameter is `<Controller>_<handler>Alias<index>`.
 * `routeTable` refuses two routes with one id.
 */
function aliasOperationIds(controllerName: string, handlerName: string, expressPaths: readonly string[]): string[] {
  const first = new Set(pathParamNames(expressPaths[0] ?? ''));
  return expressPaths.map((path, index) => {
    if (index === 0) return operationIdOf(controllerName, handlerName);
    const own = pathParamNames(path).filter((name) => !first.has(name));
    const by = own.at(-1);
    return operationIdOf(
      controllerName,
      by ? `${handlerName}By${by.charAt(0).toUpperCase()}${by.slice(1)}` : `${handlerName}Alias${index}`,
    );
  });
}

function pathParamNames(expressPath: string): string[] {
  return [...expressPath.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name]) => name);
}

function routeArguments(controller: Type, handlerName: string): (RouteArgument & { type: RouteParamtypes })[] {
  const metadata = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handlerName) ?? {}) as Record<
    string,
    RouteArgument
  >;
  // Keys are `<type>:<index>`; custom decorators (`@Auth()`) have non-numeric types and are skipped.
  return Object.entries(metadata)
    .map(([key, arg]) => ({ ...arg, type: Number(key.split(':')[0]) }))
    .filter((arg) => Number.isInteger(arg.type));
}

function methodNames(prototype: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (
    let current: object | null = prototype;
    current && current !== Object.prototype;
    current = Object.getPrototypeOf(current) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(current)) {
      if (name === 'constructor') continue;
      const descriptor = Object.getOwnPropertyDescriptor(current, name);
      if (typeof descriptor?.value === 'function') names.add(name);
    }
  }
  return [...names];
}

/** `@Controller()` without a path stores none: it mounts at the root. */
function asArray(value: string | string[] | undefined): string[] {
  return value === undefined ? [''] : Array.isArray(value) ? value : [value];
}

function joinPath(...parts: string[]): string {
  const joined = parts
    .flatMap((part) => part.split('/'))
    .filter(Boolean)
    .join('/');
  return `/${joined}`;
}
