/** The Swift SDK initialisation shown on the dashboard's quick start page, for one app. */
export function swiftQuickstartSnippet(input: {
  baseUrl: string;
  appName: string;
  bundleId: string;
  teamId: string;
}): string {
  const typeName = swiftTypeName(input.appName);
  return [
    'import SwiftUI',
    'import Attestly',
    '',
    '@main',
    `struct ${typeName}: App {`,
    '    init() {',
    '        // Configure once at launch, before the first attestation or flag lookup.',
    '        Attestly.configure(',
    `            baseURL: URL(string: ${swiftString(input.baseUrl)})!,`,
    `            bundleID: ${swiftString(input.bundleId)},`,
    `            teamID: ${swiftString(input.teamId)}`,
    '        )',
    '    }',
    '',
    '    var body: some Scene {',
    '        WindowGroup {',
    '            ContentView()',
    '        }',
    '    }',
    '}',
    '',
  ].join('\n');
}

/** A Swift string literal holding `value` exactly. */
export function swiftString(value: string): string {
  const escaped = value.replace(
    /[\\"\n\r\t\0]/g,
    (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0' })[c]!,
  );
  return `"${escaped}"`;
}

/** `My Cool app` becomes `MyCoolApp`: an upper camel case identifier ending in App. */
export function swiftTypeName(appName: string): string {
  const words = appName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
  let name = words.map((word) => word[0].toUpperCase() + word.slice(1)).join('');
  if (!/^[A-Za-z]/.test(name)) name = `My${name}`;
  name = /App$/i.test(name) ? name.replace(/app$/i, 'App') : `${name}App`;
  // A type named App would shadow SwiftUI's App protocol.
  return name === 'App' ? 'MyApp' : name;
}
