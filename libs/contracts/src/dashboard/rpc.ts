export interface UserPreferences {
  /** SPEC §3: default true. */
  auto_login_message_enabled: boolean;
}

export interface DashboardRequests {
  /** Read by the sessions service when a link becomes ready (default true if no answer in time). */
  'dashboard.preferences.get': { request: { userId: string }; reply: UserPreferences };
  'dashboard.preferences.set': { request: { userId: string; preferences: Partial<UserPreferences> }; reply: UserPreferences };
}
