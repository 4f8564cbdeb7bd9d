// The benchmark scenarios, in order. `reference` comes first: the cheapest route through
// every global middleware, against which the others are compared.
export const scenarios = [
  { name: 'reference', title: 'GET /health (reference)', path: '/health' },
  { name: 'health', title: 'GET /api/v1/health (database round trip)', path: '/api/v1/health' },
];
