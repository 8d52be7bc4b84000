import { render, screen } from '@testing-library/react';
import { expect, it } from 'vitest';
import { App } from './App.js';

it('shows the product title', () => {
  render(<App />);
  expect(screen.getByRole('heading', { name: 'Business Notification System' })).toBeTruthy();
});
