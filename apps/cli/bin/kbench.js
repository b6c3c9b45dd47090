#!/usr/bin/env node
// A committed entry point, so npm can link the `kbench` bin at install time, before the build has run.
import '../dist/main.js';
