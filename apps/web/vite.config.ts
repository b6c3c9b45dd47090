import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// The API server (kbench serve) listens on 7420; in development Vite serves the app and forwards /api.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  server: {
    host: '127.0.0.1',
    proxy: {
      '/api': {
        target: 'http://127.0.0.1:7420',
        changeOrigin: true,
        configure(proxy) {
          // The API refuses other origins; requests through this local proxy are our own pages'.
          proxy.on('proxyReq', (req) => req.removeHeader('origin'));
        },
      },
    },
  },
  test: { environment: 'jsdom', include: ['test/**/*.test.{ts,tsx}'] },
});
