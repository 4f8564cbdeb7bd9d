import { describe, expect, it } from '@jest/globals';
import { swiftQuickstartSnippet, swiftString, swiftTypeName } from './quickstart-snippet.js';

describe('Swift quick start snippet', () => {
  it('configures the SDK with the service URL, bundle ID and team ID', () => {
    const snippet = swiftQuickstartSnippet({
      baseUrl: 'https://api.example.com',
      appName: 'Acme',
      bundleId: 'com.acme.app',
      teamId: 'TEAM123456',
    });
    expect(snippet).toContain('struct AcmeApp: App {');
    expect(snippet).toContain('baseURL: URL(string: "https://api.example.com")!,');
    expect(snippet).toContain('bundleID: "com.acme.app",');
    expect(snippet).toContain('teamID: "TEAM123456"');
  });

  it('escapes string literals and makes a valid type name from any app name', () => {
    expect(swiftString('a "b" \\ c\n')).toBe('"a \\"b\\" \\\\ c\\n"');
    expect(swiftTypeName('my cool app')).toBe('MyCoolApp');
    expect(swiftTypeName('Café Météo')).toBe('CafeMeteoApp');
    expect(swiftTypeName('2048')).toBe('My2048App');
    expect(swiftTypeName('App')).toBe('MyApp');
    expect(swiftTypeName('***')).toBe('MyApp');
  });
});
