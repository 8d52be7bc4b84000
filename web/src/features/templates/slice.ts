import { createSlice, type PayloadAction } from '@reduxjs/toolkit';
import type { TemplateCategory } from '@bns/contracts';
import type { TemplateFilters } from '../../api/types.js';

export interface TemplatesUiState {
  filters: TemplateFilters;
}

export const templatesSlice = createSlice({
  name: 'templates',
  initialState: { filters: { category: 'all', favoritesOnly: false } } as TemplatesUiState,
  reducers: {
    categoryFilterChanged(s, a: PayloadAction<TemplateCategory | 'all'>) {
      s.filters.category = a.payload;
    },
    favoritesOnlyToggled(s, a: PayloadAction<boolean>) {
      s.filters.favoritesOnly = a.payload;
    },
  },
  selectors: {
    selectTemplateFilters: (s) => s.filters,
  },
});

export const { categoryFilterChanged, favoritesOnlyToggled } = templatesSlice.actions;
export const { selectTemplateFilters } = templatesSlice.selectors;
