#!/usr/bin/env node
import "../dist/memdir.js"
