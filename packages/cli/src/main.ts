#!/usr/bin/env node
import { runClient } from './client.js';

process.exitCode = await runClient(process.argv.slice(2));
